import sys
from pathlib import Path

# The runner helpers (rtlsim.py) and the cocotb testbenches (tb_*.py) live here.
sys.path.insert(0, str(Path(__file__).resolve().parent))
