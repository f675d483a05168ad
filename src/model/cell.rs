//! The field types a record may have: how each Rust type maps to a column
//! type, nullability and bounds, becomes a stored value and comes back
//! from one, and appends itself to a typed column without a `Value` in
//! between (the path results take).

use super::columns::ColumnValues;
use super::record::{Bounds, ColType};
use crate::params::Value;

/// A field type a record can have.
pub trait Cell: Sized {
    const TYPE: ColType;
    const NULLABLE: bool;
    const BOUNDS: Bounds = Bounds::Any;
    fn to_value(&self) -> Value;
    fn from_value(v: &Value) -> Option<Self>;
    /// Appends this cell to its column, as `to_value` would store it.
    fn put(&self, col: &mut ColumnValues);
}

impl Cell for bool {
    const TYPE: ColType = ColType::Bool;
    const NULLABLE: bool = false;
    fn to_value(&self) -> Value {
        Value::Bool(*self)
    }
    fn put(&self, col: &mut ColumnValues) {
        col.push_bool(*self);
    }
    fn from_value(v: &Value) -> Option<Self> {
        match v {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }
}

impl Cell for f64 {
    const TYPE: ColType = ColType::Float;
    const NULLABLE: bool = false;
    const BOUNDS: Bounds = Bounds::Finite;
    fn to_value(&self) -> Value {
        Value::Float(*self)
    }
    fn put(&self, col: &mut ColumnValues) {
        col.push_float(*self);
    }
    fn from_value(v: &Value) -> Option<Self> {
        match v {
            Value::Float(x) => Some(*x),
            _ => None,
        }
    }
}

impl Cell for i64 {
    const TYPE: ColType = ColType::Int;
    const NULLABLE: bool = false;
    fn to_value(&self) -> Value {
        Value::Int(*self)
    }
    fn put(&self, col: &mut ColumnValues) {
        col.push_int(*self);
    }
    fn from_value(v: &Value) -> Option<Self> {
        v.as_i64()
    }
}

macro_rules! unsigned {
    ($($t:ty),*) => {$(
        impl Cell for $t {
            const TYPE: ColType = ColType::Int;
            const NULLABLE: bool = false;
            const BOUNDS: Bounds = Bounds::NonNegative;
            fn to_value(&self) -> Value {
                Value::from(*self)
            }
            fn put(&self, col: &mut ColumnValues) {
                // As `Value::from` stores it (saturating past i64).
                col.push_int(i64::try_from(*self).unwrap_or(i64::MAX));
            }
            fn from_value(v: &Value) -> Option<Self> {
                v.as_i64().and_then(|i| <$t>::try_from(i).ok())
            }
        }
    )*};
}

unsigned!(u64, usize, u32);

impl Cell for String {
    const TYPE: ColType = ColType::Str;
    const NULLABLE: bool = false;
    fn to_value(&self) -> Value {
        Value::Str(self.clone())
    }
    fn put(&self, col: &mut ColumnValues) {
        col.push_str(self.clone());
    }
    fn from_value(v: &Value) -> Option<Self> {
        v.as_str().map(str::to_string)
    }
}

impl<T: Cell> Cell for Option<T> {
    const TYPE: ColType = T::TYPE;
    const NULLABLE: bool = true;
    const BOUNDS: Bounds = T::BOUNDS;
    fn to_value(&self) -> Value {
        self.as_ref().map_or(Value::Null, T::to_value)
    }
    fn put(&self, col: &mut ColumnValues) {
        match self {
            Some(x) => x.put(col),
            None => col.push_null(),
        }
    }
    fn from_value(v: &Value) -> Option<Self> {
        match v {
            Value::Null => Some(None),
            v => T::from_value(v).map(Some),
        }
    }
}
