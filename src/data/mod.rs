//! The data types of dpl: [`Nested`], [`Matrix`] and [`Seq`].

mod matrix;
mod nested;
mod seq;
