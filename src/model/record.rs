//! Output rows as typed records. A row type is declared once with
//! `record!`: its fields are its columns (name, type, nullability, doc and
//! bounds, in the order written), so a column and the value stored in it
//! cannot drift apart, and stored rows read back into the same struct.

pub use super::cell::Cell;
use super::columns::ColumnValues;
use crate::params::Value;

/// The storage type of a column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColType {
    Bool,
    Int,
    Float,
    Str,
    /// A list of integers (a parameter such as `corrections`).
    IntList,
}

impl ColType {
    /// As `describe` and error messages name it (Arrow's names).
    pub fn label(self) -> &'static str {
        match self {
            ColType::Bool => "bool",
            ColType::Int => "int64",
            ColType::Float => "double",
            ColType::Str => "string",
            ColType::IntList => "list<int64>",
        }
    }
}

/// What values a column may hold beyond its type, checked by `verify`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Bounds {
    Any,
    /// Counts: integers >= 0.
    NonNegative,
    /// Floats that are not NaN or infinite.
    Finite,
    /// Numbers in an inclusive range (finite).
    Range(f64, f64),
}

impl Bounds {
    pub fn admits(self, v: &Value) -> bool {
        match (self, v) {
            (Bounds::Any, _) | (_, Value::Null) => true,
            (Bounds::NonNegative, Value::Int(i)) => *i >= 0,
            (Bounds::Finite, Value::Float(x)) => x.is_finite(),
            (Bounds::Range(lo, hi), Value::Float(x)) => *x >= lo && *x <= hi,
            (Bounds::Range(lo, hi), Value::Int(i)) => (*i as f64) >= lo && (*i as f64) <= hi,
            _ => true,
        }
    }

    pub fn describe(self) -> String {
        match self {
            Bounds::Any => String::new(),
            Bounds::NonNegative => ">= 0".into(),
            Bounds::Finite => "finite".into(),
            Bounds::Range(lo, hi) => format!("{lo} ..= {hi}"),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Column {
    pub name: &'static str,
    pub ty: ColType,
    pub nullable: bool,
    pub doc: &'static str,
    pub bounds: Bounds,
    /// How `compare` judges it (summary columns; neutral elsewhere).
    pub judge: super::Judge,
}

impl Column {
    pub const fn new(name: &'static str, ty: ColType, nullable: bool, doc: &'static str) -> Column {
        Column {
            name,
            ty,
            nullable,
            doc,
            bounds: Bounds::Any,
            judge: super::Judge::NEUTRAL,
        }
    }

    /// The documentation, without the leading space doc comments carry.
    pub fn doc(&self) -> &'static str {
        self.doc.trim()
    }

    /// Why `v` cannot be stored in this column, if it cannot.
    pub fn refuses(&self, v: &Value) -> Option<String> {
        let typed = matches!(
            (self.ty, v),
            (ColType::Bool, Value::Bool(_))
                | (ColType::Int, Value::Int(_))
                | (ColType::Float, Value::Float(_))
                | (ColType::Str, Value::Str(_))
                | (ColType::IntList, Value::List(_))
        );
        match v {
            Value::Null if !self.nullable => Some("null in a column that is never null".into()),
            Value::Null => None,
            _ if !typed => Some(format!("{v} is not a {}", self.ty.label())),
            _ if !self.bounds.admits(v) => Some(format!(
                "{v} is outside the column's bounds ({})",
                self.bounds.describe()
            )),
            _ => None,
        }
    }
}

/// A stored value that does not fit its record's field.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("column `{column}` holds {found}, which is not {expected}")]
pub struct RecordError {
    pub column: &'static str,
    pub found: String,
    pub expected: String,
}

impl RecordError {
    pub fn new(c: &Column, found: Option<&Value>) -> RecordError {
        let nullable = if c.nullable { "a nullable " } else { "a " };
        RecordError {
            column: c.name,
            found: found.map_or("nothing".into(), |v| v.to_string()),
            expected: format!("{nullable}{}", c.ty.label()),
        }
    }
}

/// A row type: its columns, and its values in the same order.
pub trait Record: Sized {
    const COLUMNS: &'static [Column];
    /// Appends this record's values, one per column, in column order.
    fn push_values(&self, out: &mut Vec<Value>);
    /// Appends this record's cells to `cols` (one per column, in order).
    fn push_columns(&self, cols: &mut [ColumnValues]);
    /// The record stored as `values` (one per column, in column order).
    fn from_values(values: &[Value]) -> Result<Self, RecordError>;

    fn to_row(&self) -> Vec<Value> {
        let mut row = Vec::with_capacity(Self::COLUMNS.len());
        self.push_values(&mut row);
        row
    }
}

/// Declares a record: a struct whose fields are its columns.
///
/// ```
/// witness::record! {
///     /// One toss.
///     #[derive(Clone, Debug, PartialEq)]
///     pub struct Toss {
///         /// toss number
///         toss: u64,
///         /// heads share so far
///         share: f64 [0.0, 1.0],
///     }
/// }
/// use witness::model::Record;
/// assert_eq!(Toss::COLUMNS[1].name, "share");
/// let t = Toss { toss: 3, share: 0.5 };
/// assert_eq!(Toss::from_values(&t.to_row()), Ok(t));
/// ```
///
/// A field may carry inclusive bounds `[lo, hi]`; without them, unsigned
/// integers must be >= 0 and floats finite. A summary field may add
/// `=> Judge::lower()` (or another `Judge`) to say how `compare` judges it.
#[macro_export]
macro_rules! record {
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident {
            $(
                $(#[doc = $doc:literal])+
                $field:ident : $ty:ty $([$lo:expr, $hi:expr])? $(=> $judge:expr)?
            ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        $vis struct $name {
            $( $(#[doc = $doc])+ pub $field: $ty, )+
        }

        impl $crate::model::Record for $name {
            const COLUMNS: &'static [$crate::model::Column] = &[
                $(
                    $crate::model::Column {
                        name: stringify!($field),
                        ty: <$ty as $crate::model::Cell>::TYPE,
                        nullable: <$ty as $crate::model::Cell>::NULLABLE,
                        doc: concat!($($doc),+),
                        bounds: $crate::__record_bounds!($ty $(, $lo, $hi)?),
                        judge: $crate::__record_judge!($($judge)?),
                    },
                )+
            ];

            fn push_values(&self, out: &mut Vec<$crate::params::Value>) {
                $( out.push($crate::model::Cell::to_value(&self.$field)); )+
            }

            fn push_columns(&self, cols: &mut [$crate::model::ColumnValues]) {
                let mut cols = cols.iter_mut();
                $(
                    $crate::model::Cell::put(
                        &self.$field,
                        cols.next().expect("a column per field"),
                    );
                )+
            }

            fn from_values(
                values: &[$crate::params::Value],
            ) -> Result<Self, $crate::model::RecordError> {
                let mut cells = values.iter();
                let mut columns = <Self as $crate::model::Record>::COLUMNS.iter();
                Ok($name {
                    $(
                        $field: {
                            let column = columns.next().expect("a column per field");
                            let value = cells.next();
                            value
                                .and_then(<$ty as $crate::model::Cell>::from_value)
                                .ok_or_else(|| $crate::model::RecordError::new(column, value))?
                        },
                    )+
                })
            }
        }
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __record_judge {
    () => {
        $crate::model::Judge::NEUTRAL
    };
    ($judge:expr) => {
        $judge
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __record_bounds {
    ($ty:ty) => {
        <$ty as $crate::model::Cell>::BOUNDS
    };
    ($ty:ty, $lo:expr, $hi:expr) => {
        $crate::model::Bounds::Range($lo as f64, $hi as f64)
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    crate::record! {
        #[derive(Clone, Debug, PartialEq)]
        struct Probe {
            /// a count
            n: u64,
            /// a share
            share: f64 [0.0, 1.0],
            /// maybe a round
            first: Option<u32>,
            /// a label
            label: String,
        }
    }

    #[test]
    fn columns_follow_the_fields_and_rows_round_trip() {
        let names: Vec<&str> = Probe::COLUMNS.iter().map(|c| c.name).collect();
        assert_eq!(names, ["n", "share", "first", "label"]);
        assert_eq!(Probe::COLUMNS[1].bounds, Bounds::Range(0.0, 1.0));
        assert_eq!(Probe::COLUMNS[0].bounds, Bounds::NonNegative);
        assert!(Probe::COLUMNS[2].nullable && !Probe::COLUMNS[3].nullable);
        let p = Probe {
            n: 3,
            share: 0.25,
            first: None,
            label: "x".into(),
        };
        assert_eq!(Probe::from_values(&p.to_row()), Ok(p));
    }

    #[test]
    fn a_wrong_cell_names_its_column() {
        let row = [Value::Int(1), Value::Null, Value::Null, Value::from("x")];
        let err = Probe::from_values(&row).unwrap_err();
        assert_eq!(err.column, "share");
        assert!(err.to_string().contains("not a double"), "{err}");
    }

    #[test]
    fn columns_refuse_nulls_wrong_types_and_values_out_of_bounds() {
        let share = &Probe::COLUMNS[1];
        assert!(share.refuses(&Value::Float(0.5)).is_none());
        assert!(share.refuses(&Value::Float(f64::NAN)).is_some());
        assert!(share.refuses(&Value::Float(1.5)).is_some());
        assert!(share.refuses(&Value::Null).is_some());
        assert!(share.refuses(&Value::Int(1)).is_some());
        assert!(Probe::COLUMNS[0].refuses(&Value::Int(-1)).is_some());
        assert!(Probe::COLUMNS[2].refuses(&Value::Null).is_none());
    }
}
