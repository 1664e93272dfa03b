//! Deterministic test values of every type the crate can send, so that receivers can check
//! exactly what arrived.

use ferrompi::{Bytes, Equivalence};
use std::fmt::Debug;

/// A plain struct that travels as bytes.
#[derive(Debug, Clone, Copy, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Point {
    pub x: f64,
    pub y: f32,
    pub id: u32,
}

/// A type whose values can be made from a seed and compared.
pub trait TestValue: Equivalence + PartialEq + Debug + Default {
    fn make(seed: u64) -> Self;
}

macro_rules! ints {
    ($($t:ty),*) => {$(
        impl TestValue for $t {
            fn make(seed: u64) -> Self {
                // Wrapping on purpose: any bit pattern is a fine test value.
                seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) as $t
            }
        }
    )*};
}
ints!(i8, i16, i32, i64, isize, u8, u16, u32, u64, usize);

impl TestValue for f32 {
    fn make(seed: u64) -> Self {
        (seed % 100_003) as f32 * 0.5 - 17.25
    }
}

impl TestValue for f64 {
    fn make(seed: u64) -> Self {
        (seed % 1_000_003) as f64 * 0.25 - 1234.5
    }
}

impl TestValue for bool {
    fn make(seed: u64) -> Self {
        seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 63 == 1
    }
}

impl<T: TestValue, const N: usize> TestValue for [T; N]
where
    [T; N]: Default,
{
    fn make(seed: u64) -> Self {
        std::array::from_fn(|i| T::make(seed.wrapping_mul(31).wrapping_add(i as u64)))
    }
}

impl Default for Point {
    fn default() -> Self {
        Point {
            x: 0.0,
            y: 0.0,
            id: 0,
        }
    }
}

impl TestValue for Bytes<Point> {
    fn make(seed: u64) -> Self {
        Bytes(Point {
            x: f64::make(seed),
            y: f32::make(seed + 1),
            id: u32::make(seed + 2),
        })
    }
}

/// The length after which [`values`] repeats: a prime, so a block moved by a power of two
/// (a chunk boundary) still shows.
const PERIOD: usize = 65_521;

/// `len` values made from `base`. Past [`PERIOD`] values the sequence repeats, copied rather
/// than made one by one: a 64 MiB buffer is made in milliseconds, also in debug builds under
/// valgrind (where making each value took minutes).
pub fn values<T: TestValue>(base: u64, len: usize) -> Vec<T> {
    let mut made: Vec<T> = (0..len.min(PERIOD) as u64)
        .map(|i| T::make(base.wrapping_mul(1_000_003).wrapping_add(i)))
        .collect();
    made.reserve_exact(len - made.len());
    while made.len() < len {
        let more = (len - made.len()).min(made.len());
        made.extend_from_within(..more);
    }
    made
}

/// Calls `$f::<T>($args)` for every type the crate can send.
#[macro_export]
macro_rules! for_each_type {
    ($f:ident($($args:expr),*)) => {{
        $f::<i8>($($args),*);
        $f::<i16>($($args),*);
        $f::<i32>($($args),*);
        $f::<i64>($($args),*);
        $f::<isize>($($args),*);
        $f::<u8>($($args),*);
        $f::<u16>($($args),*);
        $f::<u32>($($args),*);
        $f::<u64>($($args),*);
        $f::<usize>($($args),*);
        $f::<f32>($($args),*);
        $f::<f64>($($args),*);
        $f::<bool>($($args),*);
        $f::<[f64; 3]>($($args),*);
        $f::<[u8; 5]>($($args),*);
        $f::<ferrompi::Bytes<$crate::values::Point>>($($args),*);
    }};
}
