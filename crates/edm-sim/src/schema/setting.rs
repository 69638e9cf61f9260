//! A field's Rust value as a [`Value`] and back.
use super::Value;
use crate::edm::faults::{format_failures, Failure};
use crate::time::Ps;

/// A Rust value a field holds, as a [`Value`] (`from_value` sees only values
/// its field's [`Kind`] has accepted).
pub trait Setting {
    fn to_value(&self) -> Value;
    fn from_value(v: &Value) -> Self;
}

macro_rules! int_setting {
    ($($t:ty),*) => {$(
        impl Setting for $t {
            fn to_value(&self) -> Value { Value::Int(*self as i128) }
            fn from_value(v: &Value) -> Self { match v { Value::Int(i) => *i as $t, _ => unreachable!("kind-checked") } }
        }
    )*};
}
int_setting!(u32, u64, usize, i32);

impl Setting for f64 {
    fn to_value(&self) -> Value {
        Value::Float(*self)
    }
    fn from_value(v: &Value) -> Self {
        match v {
            Value::Float(x) => *x,
            Value::Int(i) => *i as f64,
            Value::Text(_) => unreachable!("kind-checked"),
        }
    }
}

impl Setting for bool {
    fn to_value(&self) -> Value {
        Value::Int(*self as i128)
    }
    fn from_value(v: &Value) -> Self {
        *v == Value::Int(1)
    }
}

impl Setting for Vec<Failure> {
    fn to_value(&self) -> Value {
        Value::Text(format_failures(self))
    }
    fn from_value(v: &Value) -> Self {
        match v {
            Value::Text(s) => Failure::parse_list(s).expect("kind-checked"),
            _ => unreachable!("kind-checked"),
        }
    }
}

impl Setting for String {
    fn to_value(&self) -> Value {
        Value::Text(self.clone())
    }
    fn from_value(v: &Value) -> Self {
        match v {
            Value::Text(s) => s.clone(),
            _ => unreachable!("kind-checked"),
        }
    }
}

/// -1 for None (the rule's own), else picoseconds.
impl Setting for Option<Ps> {
    fn to_value(&self) -> Value {
        Value::Int(self.map_or(-1, |p| p as i128))
    }
    fn from_value(v: &Value) -> Self {
        match v {
            Value::Int(i) if *i >= 0 => Some(*i as Ps),
            _ => None,
        }
    }
}
