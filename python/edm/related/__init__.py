"""What the related systems teach (issue 24): Clio's translated, protected
memory node (``clio``), rack memory pools (Puri et al.) and closed-loop
applications (Gao et al.)."""
