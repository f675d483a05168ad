//! Enums that are written as words: in manifests (`graph = "hub"`), in
//! output columns (`status = "high_confidence"`) and in messages. One macro
//! declares the variants and their words together, so the word list, the
//! parser and the printer cannot drift apart, and every such enum reads and
//! prints the same way.

/// An enum whose every variant has one word.
pub trait Words: Sized + Copy + 'static {
    /// Every variant, in declaration order.
    const ALL: &'static [Self];
    /// Every word, in declaration order (`ALL[i]` is written `NAMES[i]`).
    const NAMES: &'static [&'static str];

    fn name(self) -> &'static str;

    fn from_name(word: &str) -> Option<Self> {
        Self::NAMES
            .iter()
            .position(|n| *n == word)
            .map(|i| Self::ALL[i])
    }

    /// "a, b or c", for messages.
    fn allowed() -> String {
        match Self::NAMES {
            [] => String::new(),
            [one] => (*one).to_string(),
            [init @ .., last] => format!("{} or {last}", init.join(", ")),
        }
    }
}

/// Declares an enum with a word per variant:
///
/// ```
/// witness::words! {
///     /// Graph families.
///     pub enum Family { Ring = "ring", SmallWorld = "small_world" }
/// }
/// use witness::words::Words;
/// assert_eq!(Family::from_name("small_world"), Some(Family::SmallWorld));
/// assert_eq!(Family::Ring.name(), "ring");
/// ```
#[macro_export]
macro_rules! words {
    ($(#[$meta:meta])* $vis:vis enum $name:ident { $($(#[$vmeta:meta])* $variant:ident = $word:literal),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        $vis enum $name { $($(#[$vmeta])* $variant),+ }

        impl $name {
            /// The variant's word.
            pub fn name(self) -> &'static str {
                match self { $($name::$variant => $word),+ }
            }

            /// The variant a word stands for.
            pub fn from_name(word: &str) -> Option<Self> {
                <Self as $crate::words::Words>::from_name(word)
            }
        }

        impl $crate::words::Words for $name {
            const ALL: &'static [Self] = &[$($name::$variant),+];
            const NAMES: &'static [&'static str] = &[$($word),+];
            fn name(self) -> &'static str {
                $name::name(self)
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str($crate::words::Words::name(*self))
            }
        }

        impl ::serde::Serialize for $name {
            fn serialize<S: ::serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str($crate::words::Words::name(*self))
            }
        }

        impl $crate::params::ParamType for $name {
            fn from_value(v: &$crate::params::Value) -> Self {
                match v {
                    $crate::params::Value::Str(s) => {
                        <$name as $crate::words::Words>::from_name(s)
                            .unwrap_or_else(|| panic!("{s:?} is not a {}", stringify!($name)))
                    }
                    other => panic!("{other} is not a {}", stringify!($name)),
                }
            }
            fn into_value(self) -> $crate::params::Value {
                $crate::params::Value::Str($crate::words::Words::name(self).to_string())
            }
        }

        impl $crate::model::Cell for $name {
            const TYPE: $crate::model::ColType = $crate::model::ColType::Str;
            const NULLABLE: bool = false;
            fn to_value(&self) -> $crate::params::Value {
                $crate::params::Value::Str($crate::words::Words::name(*self).to_string())
            }
            fn put(&self, col: &mut $crate::model::ColumnValues) {
                col.push_str($crate::words::Words::name(*self).to_string());
            }
            fn from_value(v: &$crate::params::Value) -> Option<Self> {
                match v {
                    $crate::params::Value::Str(s) => <$name as $crate::words::Words>::from_name(s),
                    _ => None,
                }
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use super::Words;

    crate::words! {
        /// A test enum.
        enum Shade { Light = "light", DarkGrey = "dark_grey", Black = "black" }
    }

    #[test]
    fn words_round_trip_and_unknown_words_are_none() {
        for &s in Shade::ALL {
            assert_eq!(Shade::from_name(s.name()), Some(s));
        }
        assert_eq!(Shade::from_name("Light"), None);
        assert_eq!(Shade::DarkGrey.to_string(), "dark_grey");
        assert_eq!(Shade::allowed(), "light, dark_grey or black");
    }
}
