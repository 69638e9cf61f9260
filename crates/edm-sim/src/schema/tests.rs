//! The schema's own checks: defaults, resolution, refusals.
use super::*;

fn given(pairs: &[(&str, Value)]) -> Vec<(String, Value)> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect()
}

#[test]
fn defaults_are_the_structs_defaults_and_pass_their_own_checks() {
    let c = RunConfig::resolve(&[]).unwrap();
    assert_eq!(c.fabric.nodes, FabricConfig::default().nodes);
    assert_eq!(
        format!("{:?}", c.edm),
        format!("{:?}", EdmConfig::edm_rules())
    );
    assert_eq!(c.baselines, BaselineParams::default());
    c.validate().unwrap();
    assert_eq!(c.values().len(), FIELDS.len());
}

#[test]
fn the_protocols_are_edms_two_then_the_baselines() {
    assert_eq!([EDM_PROTOCOLS, BASELINES].concat(), PROTOCOLS);
}

#[test]
fn scopes_name_known_baselines_and_rates_are_the_specs() {
    for f in FIELDS {
        if let Scope::Baselines(names) = f.scope {
            assert!(names.iter().all(|n| BASELINES.contains(n)), "{}", f.name);
        }
    }
    let Kind::IntOf(rates) = field("link_gbps").unwrap().kind else {
        panic!("link_gbps is a set of rates")
    };
    assert!(rates.iter().all(|&g| spec::block_ps(g as u32).is_some()));
    assert!(spec::block_ps(40).is_none());
}

#[test]
fn every_field_round_trips_its_default() {
    let c = RunConfig::default();
    for f in FIELDS {
        let mut d = RunConfig::default();
        (f.set)(&mut d, &(f.get)(&c));
        assert_eq!((f.get)(&d), (f.get)(&c), "{}", f.name);
    }
}

#[test]
fn errors_name_the_field_and_its_range() {
    let e = RunConfig::resolve(&given(&[("nodes", Value::Int(1))])).unwrap_err();
    assert_eq!(e.to_string(), "field 'nodes' = 1 is not 2..1024");
    let e = RunConfig::resolve(&given(&[("nodes", Value::Text("8".into()))])).unwrap_err();
    assert_eq!(e.to_string(), "field 'nodes' = '8' should be an integer");
    let e = RunConfig::resolve(&given(&[("lod", Value::Float(0.5))])).unwrap_err();
    assert!(e.to_string().starts_with("unknown field(s) ['lod']"), "{e}");
    let e = RunConfig::resolve(&given(&[
        ("protocol", Value::Text("dctcp".into())),
        ("zero_queue", Value::Int(1)),
    ]))
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "field(s) ['zero_queue'] apply to EDM only, not 'dctcp'"
    );
    let e = RunConfig::resolve(&given(&[("batch_bytes", Value::Int(63))])).unwrap_err();
    assert_eq!(
        e.to_string(),
        "field 'batch_bytes' = 63 is not 0 (off) or 64..16777216"
    );
}

#[test]
fn the_paper_protocol_takes_the_papers_rules_and_refuses_others() {
    let c = RunConfig::resolve(&given(&[("protocol", Value::Text("edm-paper".into()))])).unwrap();
    assert_eq!(format!("{:?}", c.edm), format!("{:?}", EdmConfig::paper()));
    // Giving a lever its paper value is no change.
    RunConfig::resolve(&given(&[
        ("protocol", Value::Text("edm-paper".into())),
        ("zero_queue", Value::Int(0)),
    ]))
    .unwrap();
    let e = RunConfig::resolve(&given(&[
        ("protocol", Value::Text("edm-paper".into())),
        ("zero_queue", Value::Int(1)),
    ]))
    .unwrap_err();
    assert!(
        e.to_string()
            .contains("cannot be changed with protocol 'edm-paper'"),
        "{e}"
    );
}

// The schema names the generated workloads; the workload module ships their
// CDFs (it sits below the schema, so the check lives here).
#[test]
fn every_generated_application_ships_a_cdf_that_parses() {
    use crate::workload::{app_cdf_text, SizeCdf, APP_CDFS};
    let apps: Vec<&str> = super::GENERATED_WORKLOADS
        .iter()
        .copied()
        .filter(|w| *w != "micro")
        .collect();
    let shipped: Vec<&str> = APP_CDFS.iter().map(|(name, _)| *name).collect();
    assert_eq!(apps, shipped);
    for (name, text) in APP_CDFS {
        let cdf = SizeCdf::from_text(text, 1460).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(cdf.mean_bytes() > 0.0, "{name}");
    }
    assert_eq!(app_cdf_text("micro"), None);
}
