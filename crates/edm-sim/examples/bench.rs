//! Engine speed without Python: `cargo run -p edm-sim --release --example bench
//! -- [micro|hadoop] [messages] [paper|edm|BASELINE] [nodes]` (the cases of
//! experiments/bench_sim.py; `paper`, the default: the paper's rules; `edm`:
//! EDM's rules; or a packet baseline by name, e.g. `dctcp`; 144 nodes unless
//! given).
use edm_sim::baselines::baseline;
use edm_sim::config::FabricConfig;
use edm_sim::edm::config::EdmConfig;
use edm_sim::edm::Edm;
use edm_sim::engine::{Feed, Protocol};
use edm_sim::workload::{OpenLoop, Roles, SizeCdf};
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let case = args.get(1).map_or("micro", String::as_str);
    let (sizes, load, default_messages) = match case {
        "micro" => (SizeCdf::fixed(64), 0.8, 1_000_000),
        "hadoop" => {
            let text = edm_sim::workload::app_cdf_text("hadoop").unwrap();
            (SizeCdf::from_text(text, 1460).unwrap(), 0.4, 100_000)
        }
        other => panic!("unknown case {other}"),
    };
    let messages = args.get(2).map_or(default_messages, |s| s.parse().unwrap());
    let nodes = args.get(4).map_or(144, |s| s.parse().unwrap());
    let msgs = OpenLoop {
        nodes,
        roles: Roles::AllToAll,
        link_gbps: 100,
        load,
        write_ratio: 0.5,
        sizes,
        messages,
        seed: 1,
    }
    .generate();
    let start = Instant::now();
    let mut msgs = msgs;
    edm_sim::workload::assign_addresses(&mut msgs, 1 << 30, 1);
    let fabric = FabricConfig {
        nodes,
        ..FabricConfig::default()
    };
    let mut protocol: Box<dyn Protocol> = match args.get(3).map_or("paper", String::as_str) {
        "paper" => Box::new(Edm::new(fabric, EdmConfig::paper())),
        "edm" => Box::new(Edm::new(fabric, EdmConfig::edm_rules())),
        other => baseline(other, &fabric).unwrap_or_else(|| panic!("unknown protocol {other}")),
    };
    let out = protocol.run(Feed::Open(&msgs), &mut |_, _| {});
    let secs = start.elapsed().as_secs_f64();
    println!(
        "{case}: {messages} messages in {secs:.2} s = {:.0} msg/s, {} events, {} iterations, {} grants",
        messages as f64 / secs,
        out.totals.events,
        out.totals.edm().scheduler_iterations,
        out.totals.edm().scheduler_grants
    );
}
