//! A value against its field's kind, and the error that names the field.
use super::{Field, Kind, Setting, Value, GENERATED_WORKLOADS, U64};
use crate::edm::faults::Failure;
use std::fmt;

/// Why a configuration cannot run; `field` names the field it is about.
#[derive(Clone, Debug, PartialEq)]
pub struct ConfigError {
    pub field: Option<&'static str>,
    /// The value refused, when the message is "field = value why".
    pub value: Option<Value>,
    pub why: String,
}

impl ConfigError {
    pub(super) fn of(f: &'static Field, value: Value, why: impl Into<String>) -> Self {
        ConfigError {
            field: Some(f.name),
            value: Some(value),
            why: why.into(),
        }
    }
    pub(super) fn about(name: &'static str, why: String) -> Self {
        ConfigError {
            field: Some(name),
            value: None,
            why,
        }
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.field, &self.value) {
            (Some(name), Some(v)) => write!(f, "field '{name}' = {v} {}", self.why),
            _ => f.write_str(&self.why),
        }
    }
}

/// `['a', 'b']`, as Python prints a list of names.
pub(super) fn name_list<S: AsRef<str>>(names: &[S]) -> String {
    let quoted: Vec<String> = names.iter().map(|n| format!("'{}'", n.as_ref())).collect();
    format!("[{}]", quoted.join(", "))
}

impl Kind {
    /// What a value of the wrong type should have been.
    pub fn type_name(&self) -> &'static str {
        match self.value_type() {
            "int" => "an integer",
            "float" => "a number",
            _ => "a string",
        }
    }

    /// "int", "float" or "str": the Python type of its values.
    pub fn value_type(&self) -> &'static str {
        match self {
            Kind::Int { .. } | Kind::IntOf(_) | Kind::Flag => "int",
            Kind::Float { .. } => "float",
            Kind::Choice(_) | Kind::Workload | Kind::Failures => "str",
        }
    }

    /// The values it takes, in words (errors and docs).
    pub fn range(&self) -> String {
        let ints = |v: &[i128]| {
            let s: Vec<String> = v.iter().map(|i| i.to_string()).collect();
            format!("{} or {}", s[..s.len() - 1].join(", "), s[s.len() - 1])
        };
        match *self {
            Kind::Int { min, max, or_zero } => {
                let above = if max == U64 {
                    format!("{min} or more")
                } else {
                    format!("{min}..{max}")
                };
                match (or_zero, min <= 1) {
                    (false, _) => above,
                    (true, true) if max == U64 => "0 (default) or more".into(),
                    (true, true) => format!("0 (default) or up to {max}"),
                    (true, false) => format!("0 (off) or {above}"),
                }
            }
            Kind::IntOf(v) => ints(v),
            Kind::Flag => "0 or 1".into(),
            Kind::Float {
                min,
                max,
                open_min,
                open_max,
            } => {
                format!(
                    "{}{min:?}, {max:?}{}",
                    if open_min { "(" } else { "[" },
                    if open_max { ")" } else { "]" }
                )
            }
            Kind::Choice(names) => names.join(", "),
            Kind::Workload => format!(
                "{}, or a size-CDF or trace file",
                GENERATED_WORKLOADS.join(", ")
            ),
            Kind::Failures => {
                "events target@down_ns[-up_ns][/ber], comma-separated; target switch[:P] or link:H[:P]"
                    .into()
            }
        }
    }

    /// `v` as this kind holds it (an integer for a number becomes a float),
    /// or why not: `Err(None)` for the wrong type, `Err(Some(why))` out of range.
    pub(super) fn accept(&self, v: &Value) -> Result<Value, Option<String>> {
        match (self, v) {
            (Kind::Int { min, max, or_zero }, Value::Int(i)) => {
                if (*or_zero && *i == 0) || (min..=max).contains(&i) {
                    Ok(v.clone())
                } else {
                    Err(Some(format!("is not {}", self.range())))
                }
            }
            (Kind::IntOf(allowed), Value::Int(i)) if allowed.contains(i) => Ok(v.clone()),
            (Kind::Flag, Value::Int(0 | 1)) => Ok(v.clone()),
            (Kind::IntOf(_) | Kind::Flag, Value::Int(_)) => {
                Err(Some(format!("is not {}", self.range())))
            }
            (
                Kind::Float {
                    min,
                    max,
                    open_min,
                    open_max,
                },
                Value::Int(_) | Value::Float(_),
            ) => {
                let x = f64::from_value(v);
                let above = if *open_min { x > *min } else { x >= *min };
                let below = if *open_max { x < *max } else { x <= *max };
                if above && below {
                    Ok(Value::Float(x))
                } else {
                    Err(Some(format!("is not in {}", self.range())))
                }
            }
            (Kind::Choice(names), Value::Text(s)) => {
                if names.contains(&s.as_str()) {
                    Ok(v.clone())
                } else {
                    Err(Some(format!("is not one of {}", name_list(names))))
                }
            }
            (Kind::Workload, Value::Text(s)) => {
                if GENERATED_WORKLOADS.contains(&s.as_str()) || std::path::Path::new(s).is_file() {
                    Ok(v.clone())
                } else {
                    Err(Some(format!(
                        "is not one of {} or an existing size-CDF or trace file",
                        name_list(GENERATED_WORKLOADS)
                    )))
                }
            }
            (Kind::Failures, Value::Text(s)) => match Failure::parse_list(s) {
                Ok(_) => Ok(v.clone()),
                Err(why) => Err(Some(why)),
            },
            _ => Err(None),
        }
    }
}

/// Checks `v` against `f`'s kind; the value as the field holds it.
pub(super) fn accept(f: &'static Field, v: &Value) -> Result<Value, ConfigError> {
    f.kind.accept(v).map_err(|why| {
        let why = why.unwrap_or_else(|| format!("should be {}", f.kind.type_name()));
        ConfigError::of(f, v.clone(), why)
    })
}
