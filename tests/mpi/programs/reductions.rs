//! Reductions: every predefined op against a sequential reference, on every type it is defined
//! for, through reduce/allreduce/scan/exscan/reduce_scatter(_block), in place and nonblocking;
//! MINLOC/MAXLOC pairs; user ops (commutative and not) against a fold in rank order;
//! `reduce_local` and `is_commutative`.

use crate::checks::Checks;
use ferrompi::{
    BitAnd, BitOr, BitXor, Communicator, Equivalence, Loc, LogicalAnd, LogicalOr, LogicalXor, Max,
    MaxLoc, Min, MinLoc, Mpi, Op, Partition, Prod, Sum, UserOp, scope,
};
use std::fmt::Debug;

/// Small per-rank inputs, so sums and products stay exact and in range for every type.
trait Num: Equivalence + Copy + PartialEq + Debug + Default {
    fn small(rank: i32, i: usize) -> Self;
}

macro_rules! num {
    ($($t:ty),*) => {$(
        impl Num for $t {
            fn small(rank: i32, i: usize) -> Self {
                (((rank as usize * 7 + i * 3) % 4) + 1) as $t
            }
        }
    )*};
}
num!(i8, i16, i32, i64, isize, u8, u16, u32, u64, usize, f32, f64);

impl Num for bool {
    fn small(rank: i32, i: usize) -> Self {
        (rank as usize + i).is_multiple_of(3)
    }
}

fn input<T: Num>(rank: i32, len: usize) -> Vec<T> {
    (0..len).map(|i| T::small(rank, i)).collect()
}

/// Checks one op on every reduction collective, at lengths 0, 1 and 1000, against `fold`
/// applied in rank order.
fn check_op<T: Num, O: Op<T> + Copy>(
    comm: &Communicator<'_>,
    t: &mut Checks,
    op: O,
    fold: impl Fn(T, T) -> T,
    label: &str,
) {
    for len in [0, 1, 1000] {
        check_op_len(comm, t, op, &fold, label, len);
    }
}

fn check_op_len<T: Num, O: Op<T> + Copy>(
    comm: &Communicator<'_>,
    t: &mut Checks,
    op: O,
    fold: &impl Fn(T, T) -> T,
    label: &str,
    len: usize,
) {
    let (rank, size) = (comm.rank(), comm.size());
    let n = size as usize;
    let reference = |upto: i32| -> Vec<T> {
        (0..len)
            .map(|i| (1..=upto).fold(T::small(0, i), |acc, r| fold(acc, T::small(r, i))))
            .collect()
    };
    let mine = input::<T>(rank, len);
    let all = reference(size - 1);

    let mut out = vec![T::default(); len];
    t.okay(comm.allreduce(&mine, &mut out, op), "allreduce");
    t.eq(&out, &all, format!("allreduce {label}"));
    let mut buf = mine.clone();
    t.okay(comm.allreduce_in_place(&mut buf, op), "allreduce_in_place");
    t.eq(&buf, &all, format!("allreduce_in_place {label}"));
    let mut out2 = vec![T::default(); len];
    scope(|s| {
        t.okay(
            comm.iallreduce(s, &mine, &mut out2, op)
                .and_then(|r| r.wait()),
            "iallreduce",
        )
    });
    t.eq(&out2, &all, format!("iallreduce {label}"));
    let mut buf2 = mine.clone();
    scope(|s| {
        t.okay(
            comm.iallreduce_in_place(s, &mut buf2, op)
                .and_then(|r| r.wait()),
            "iallreduce_in_place",
        )
    });
    t.eq(&buf2, &all, format!("iallreduce_in_place {label}"));

    for root in [0, size - 1] {
        let mut at_root = if rank == root {
            vec![T::default(); len]
        } else {
            Vec::new()
        };
        t.okay(comm.reduce(&mine, &mut at_root, op, root), "reduce");
        let mut in_place = mine.clone();
        t.okay(
            comm.reduce_in_place(&mut in_place, op, root),
            "reduce_in_place",
        );
        let mut nb = if rank == root {
            vec![T::default(); len]
        } else {
            Vec::new()
        };
        scope(|s| {
            t.okay(
                comm.ireduce(s, &mine, &mut nb, op, root)
                    .and_then(|r| r.wait()),
                "ireduce",
            )
        });
        let mut nb_in_place = mine.clone();
        scope(|s| {
            t.okay(
                comm.ireduce_in_place(s, &mut nb_in_place, op, root)
                    .and_then(|r| r.wait()),
                "ireduce_in_place",
            )
        });
        if rank == root {
            t.eq(&at_root, &all, format!("reduce {label} root {root}"));
            t.eq(
                &in_place,
                &all,
                format!("reduce_in_place {label} root {root}"),
            );
            t.eq(&nb, &all, format!("ireduce {label} root {root}"));
            t.eq(
                &nb_in_place,
                &all,
                format!("ireduce_in_place {label} root {root}"),
            );
        }
    }

    let prefix = reference(rank);
    let mut scanned = vec![T::default(); len];
    t.okay(comm.scan(&mine, &mut scanned, op), "scan");
    t.eq(&scanned, &prefix, format!("scan {label}"));
    let mut scanned2 = mine.clone();
    t.okay(comm.scan_in_place(&mut scanned2, op), "scan_in_place");
    t.eq(&scanned2, &prefix, format!("scan_in_place {label}"));
    let mut scanned3 = vec![T::default(); len];
    scope(|s| {
        t.okay(
            comm.iscan(s, &mine, &mut scanned3, op)
                .and_then(|r| r.wait()),
            "iscan",
        )
    });
    t.eq(&scanned3, &prefix, format!("iscan {label}"));
    let mut scanned4 = mine.clone();
    scope(|s| {
        t.okay(
            comm.iscan_in_place(s, &mut scanned4, op)
                .and_then(|r| r.wait()),
            "iscan_in_place",
        )
    });
    t.eq(&scanned4, &prefix, format!("iscan_in_place {label}"));
    let mut ex = vec![T::default(); len];
    t.okay(comm.exscan(&mine, &mut ex, op), "exscan");
    let mut ex2 = mine.clone();
    t.okay(comm.exscan_in_place(&mut ex2, op), "exscan_in_place");
    let mut ex3 = vec![T::default(); len];
    scope(|s| {
        t.okay(
            comm.iexscan(s, &mine, &mut ex3, op).and_then(|r| r.wait()),
            "iexscan",
        )
    });
    let mut ex4 = mine.clone();
    scope(|s| {
        t.okay(
            comm.iexscan_in_place(s, &mut ex4, op)
                .and_then(|r| r.wait()),
            "iexscan_in_place",
        )
    });
    if rank > 0 {
        let want = reference(rank - 1);
        t.eq(&ex, &want, format!("exscan {label}"));
        t.eq(&ex2, &want, format!("exscan_in_place {label}"));
        t.eq(&ex3, &want, format!("iexscan {label}"));
        t.eq(&ex4, &want, format!("iexscan_in_place {label}"));
    }

    // reduce_scatter_block: everyone contributes `size` blocks of `len`; rank r gets block r.
    let contribution: Vec<T> = (0..n)
        .flat_map(|b| input::<T>(rank + b as i32, len))
        .collect();
    let block_of = |b: usize| -> Vec<T> {
        (0..len)
            .map(|i| {
                (1..size).fold(T::small(b as i32, i), |acc, r| {
                    fold(acc, T::small(r + b as i32, i))
                })
            })
            .collect()
    };
    let mut mine_block = vec![T::default(); len];
    t.okay(
        comm.reduce_scatter_block(&contribution, &mut mine_block, op),
        "reduce_scatter_block",
    );
    t.eq(
        &mine_block,
        &block_of(rank as usize),
        format!("reduce_scatter_block {label}"),
    );
    let mut whole = contribution.clone();
    t.okay(
        comm.reduce_scatter_block_in_place(&mut whole, op),
        "reduce_scatter_block_in_place",
    );
    t.eq(
        &whole[..len],
        &block_of(rank as usize)[..],
        format!("reduce_scatter_block_in_place {label}"),
    );
    let mut nb_block = vec![T::default(); len];
    scope(|s| {
        t.okay(
            comm.ireduce_scatter_block(s, &contribution, &mut nb_block, op)
                .and_then(|r| r.wait()),
            "ireduce_scatter_block",
        )
    });
    t.eq(
        &nb_block,
        &block_of(rank as usize),
        format!("ireduce_scatter_block {label}"),
    );
    let mut whole = contribution.clone();
    scope(|s| {
        t.okay(
            comm.ireduce_scatter_block_in_place(s, &mut whole, op)
                .and_then(|r| r.wait()),
            "ireduce_scatter_block_in_place",
        )
    });
    t.eq(
        &whole[..len],
        &block_of(rank as usize)[..],
        format!("ireduce_scatter_block_in_place {label}"),
    );
    // reduce_scatter with equal packed blocks gives the same.
    let blocks = t.okay(Partition::<T>::uniform(n, len), "partition");
    let mut rs = vec![T::default(); len];
    t.okay(
        comm.reduce_scatter(&contribution, &mut rs, &blocks, op),
        "reduce_scatter",
    );
    t.eq(
        &rs,
        &block_of(rank as usize),
        format!("reduce_scatter {label}"),
    );
}

macro_rules! arithmetic {
    ($comm:expr, $t:expr; $($ty:ty),*) => {$(
        check_op::<$ty, _>($comm, $t, Sum, |a, b| a + b, concat!("sum ", stringify!($ty)));
        check_op::<$ty, _>($comm, $t, Prod, |a, b| a * b, concat!("prod ", stringify!($ty)));
        check_op::<$ty, _>($comm, $t, Min, |a, b| if b < a { b } else { a }, concat!("min ", stringify!($ty)));
        check_op::<$ty, _>($comm, $t, Max, |a, b| if b > a { b } else { a }, concat!("max ", stringify!($ty)));
    )*};
}

macro_rules! integer {
    ($comm:expr, $t:expr; $($ty:ty),*) => {$(
        check_op::<$ty, _>($comm, $t, BitAnd, |a, b| a & b, concat!("band ", stringify!($ty)));
        check_op::<$ty, _>($comm, $t, BitOr, |a, b| a | b, concat!("bor ", stringify!($ty)));
        check_op::<$ty, _>($comm, $t, BitXor, |a, b| a ^ b, concat!("bxor ", stringify!($ty)));
        check_op::<$ty, _>($comm, $t, LogicalAnd, |a, b| ((a != 0) && (b != 0)) as $ty, concat!("land ", stringify!($ty)));
        check_op::<$ty, _>($comm, $t, LogicalOr, |a, b| ((a != 0) || (b != 0)) as $ty, concat!("lor ", stringify!($ty)));
        check_op::<$ty, _>($comm, $t, LogicalXor, |a, b| ((a != 0) != (b != 0)) as $ty, concat!("lxor ", stringify!($ty)));
    )*};
}

/// `reduce_local` (no communication) and `is_commutative` (`MPI_Op_commutative`).
fn local(mpi: &Mpi, t: &mut Checks) {
    let input = [1i64, -2, 3, 40];
    let mut inout = [10i64, 20, -30, 4];
    t.okay(
        mpi.reduce_local(&input, &mut inout, Sum),
        "reduce_local sum",
    );
    t.eq(
        inout,
        [11, 18, -27, 44],
        "reduce_local: inout = input + inout",
    );
    t.okay(
        mpi.reduce_local(&input, &mut inout, Max),
        "reduce_local max",
    );
    t.eq(inout, [11, 18, 3, 44], "reduce_local max");
    let mut bits = [true, false, true];
    t.okay(
        mpi.reduce_local(&[true, true, false], &mut bits, LogicalAnd),
        "land bool",
    );
    t.eq(bits, [true, false, false], "reduce_local land");
    t.err(
        mpi.reduce_local(&input, &mut [0i64; 3], Sum),
        |e| matches!(e.kind(), ferrompi::ErrorKind::BufferSize { .. }),
        "reduce_local length mismatch",
    );
    // A non-commutative op is applied as `input ∘ inout`: the order is visible.
    let concat = t.okay(
        UserOp::<[i64; 2]>::non_commutative(mpi, |a, b| {
            for (x, y) in a.iter().zip(b.iter_mut()) {
                *y = [x[0] * y[1] + y[0], x[1] * y[1]];
            }
        }),
        "user op",
    );
    let mut digits = [[2i64, 10]];
    t.okay(
        mpi.reduce_local(&[[1, 10]], &mut digits, &concat),
        "reduce_local user op",
    );
    t.eq(digits, [[12, 100]], "reduce_local applies input ∘ inout");
    t.eq_ok(concat.is_commutative(), false, "non-commutative user op");
    let sum = t.okay(
        UserOp::<i64>::commutative(mpi, |a, b| b.iter_mut().zip(a).for_each(|(y, x)| *y += x)),
        "commutative user op",
    );
    t.eq_ok(sum.is_commutative(), true, "commutative user op");
    t.eq_ok(Sum.is_commutative(), true, "MPI_SUM is commutative");
    t.eq_ok(MaxLoc.is_commutative(), true, "MPI_MAXLOC is commutative");
}

pub fn run(mpi: &Mpi, t: &mut Checks) {
    let world = mpi.world();
    let (rank, size) = (world.rank(), world.size());
    // The product of up to 4 ranks' values of 1..=4 is at most 256: u8/i8 products may wrap, so
    // prod is checked for them with wrapping arithmetic below instead.
    arithmetic!(&world, t; i16, i32, i64, isize, u16, u32, u64, usize, f32, f64);
    check_op::<u8, _>(&world, t, Sum, |a, b| a.wrapping_add(b), "sum u8");
    check_op::<i8, _>(&world, t, Max, |a, b| a.max(b), "max i8");
    check_op::<u8, _>(&world, t, Min, |a, b| a.min(b), "min u8");
    integer!(&world, t; i8, i16, i32, i64, isize, u8, u16, u32, u64, usize);
    check_op::<bool, _>(&world, t, LogicalAnd, |a, b| a && b, "land bool");
    check_op::<bool, _>(&world, t, LogicalOr, |a, b| a || b, "lor bool");
    check_op::<bool, _>(&world, t, LogicalXor, |a, b| a != b, "lxor bool");

    local(mpi, t);

    // 1 Mi elements (64 Ki under valgrind, where the binding's path is the same and checking
    // the result element by element took half a minute).
    let (len, label) = if crate::under_tool() {
        (1 << 16, "sum f64 x 64Ki")
    } else {
        (1 << 20, "sum f64 x 1Mi")
    };
    check_op_len::<f64, _>(&world, t, Sum, &|a, b| a + b, label, len);

    // Arrays reduce element-wise.
    let mine = [[f64::from(rank), 1.0, -f64::from(rank)]; 2];
    let mut out = [[0.0; 3]; 2];
    t.okay(world.allreduce(&mine, &mut out, Sum), "allreduce arrays");
    let s = f64::from(size * (size - 1) / 2);
    t.eq(
        out,
        [[s, f64::from(size), -s]; 2],
        "element-wise sum of [f64; 3]",
    );

    // MINLOC / MAXLOC: value and the lowest index holding it.
    let value = |r: i32| ((r * 37) % 5) as f64;
    let mine = [Loc {
        value: value(rank),
        index: rank,
    }];
    let mut lo = [Loc::<f64>::default()];
    let mut hi = [Loc::<f64>::default()];
    t.okay(world.allreduce(&mine, &mut lo, MinLoc), "minloc");
    t.okay(world.allreduce(&mine, &mut hi, MaxLoc), "maxloc");
    let ranks = 0..size;
    let min = ranks.clone().map(value).fold(f64::INFINITY, f64::min);
    let max = ranks.clone().map(value).fold(f64::NEG_INFINITY, f64::max);
    let first = |v: f64| ranks.clone().find(|&r| value(r) == v).unwrap_or(-1);
    t.eq(
        lo[0],
        Loc {
            value: min,
            index: first(min),
        },
        "minloc f64",
    );
    t.eq(
        hi[0],
        Loc {
            value: max,
            index: first(max),
        },
        "maxloc f64",
    );
    let mut lo32 = [Loc::<f32>::default()];
    t.okay(
        world.allreduce(
            &[Loc {
                value: value(rank) as f32,
                index: rank,
            }],
            &mut lo32,
            MinLoc,
        ),
        "minloc f32",
    );
    t.eq(lo32[0].index, first(min), "minloc f32 index");
    let mut hi_i = [Loc::<i32>::default()];
    t.okay(
        world.allreduce(
            &[Loc {
                value: value(rank) as i32,
                index: rank,
            }],
            &mut hi_i,
            MaxLoc,
        ),
        "maxloc i32",
    );
    t.eq(
        hi_i[0],
        Loc {
            value: max as i32,
            index: first(max),
        },
        "maxloc i32",
    );
    let mut hi_l = [Loc::<i64>::default()];
    t.okay(
        world.allreduce(
            &[Loc {
                value: value(rank) as i64,
                index: rank,
            }],
            &mut hi_l,
            MaxLoc,
        ),
        "maxloc i64",
    );
    t.eq(
        hi_l[0],
        Loc {
            value: max as i64,
            index: first(max),
        },
        "maxloc i64",
    );

    // A commutative user op capturing state, on every reduction.
    let weight = 2.0f64;
    let weighted = t.okay(
        UserOp::<f64>::commutative(mpi, move |a, b| {
            for (x, y) in a.iter().zip(b) {
                *y = x.abs().max(y.abs()) * weight / weight;
            }
        }),
        "user op",
    );
    let mine: Vec<f64> = (0..100)
        .map(|i| f64::from(i) * if rank % 2 == 0 { 1.0 } else { -1.0 } + f64::from(rank))
        .collect();
    let want: Vec<f64> = (0..100)
        .map(|i| {
            (0..size)
                .map(|r| (f64::from(i) * if r % 2 == 0 { 1.0 } else { -1.0 } + f64::from(r)).abs())
                .fold(0.0, f64::max)
        })
        .collect();
    let mut out = vec![0.0; 100];
    t.okay(
        world.allreduce(&mine, &mut out, &weighted),
        "allreduce user op",
    );
    // On one rank MPI copies the input without calling the op.
    let want1: Vec<f64> = if size == 1 {
        mine.clone()
    } else {
        want.clone()
    };
    t.eq(&out, &want1, "commutative user op");
    let mut out2 = vec![0.0; 100];
    scope(|s| {
        t.okay(
            world
                .iallreduce(s, &mine, &mut out2, &weighted)
                .and_then(|r| r.wait()),
            "iallreduce user op",
        )
    });
    t.eq(&out2, &want1, "commutative user op, nonblocking");

    // A non-commutative user op: 2x2 integer matrix product, which must fold in rank order.
    let matmul = t.okay(
        UserOp::<[i64; 4]>::non_commutative(mpi, |a, b| {
            for (x, y) in a.iter().zip(b.iter_mut()) {
                *y = [
                    x[0] * y[0] + x[1] * y[2],
                    x[0] * y[1] + x[1] * y[3],
                    x[2] * y[0] + x[3] * y[2],
                    x[2] * y[1] + x[3] * y[3],
                ];
            }
        }),
        "matmul op",
    );
    let m = |r: i32| [1, i64::from(r) + 1, 0, 1 + i64::from(r % 2)];
    let mul = |x: [i64; 4], y: [i64; 4]| {
        [
            x[0] * y[0] + x[1] * y[2],
            x[0] * y[1] + x[1] * y[3],
            x[2] * y[0] + x[3] * y[2],
            x[2] * y[1] + x[3] * y[3],
        ]
    };
    let ordered = (1..size).fold(m(0), |acc, r| mul(acc, m(r)));
    let mut product = [[0i64; 4]; 3];
    t.okay(
        world.allreduce(&[m(rank); 3], &mut product, &matmul),
        "allreduce matmul",
    );
    t.eq(
        product,
        [ordered; 3],
        "non-commutative op folds in rank order",
    );
    let mut prefix = [[0i64; 4]];
    t.okay(world.scan(&[m(rank)], &mut prefix, &matmul), "scan matmul");
    t.eq(
        prefix[0],
        (1..=rank).fold(m(0), |acc, r| mul(acc, m(r))),
        "non-commutative scan",
    );

    // Many user ops alive at once: no fixed table of slots.
    let ops: Vec<UserOp<'_, i32>> = (0..50)
        .map(|k| {
            t.okay(
                UserOp::<i32>::commutative(mpi, move |a, b| {
                    for (x, y) in a.iter().zip(b) {
                        *y = x + *y + k - k;
                    }
                }),
                "user op",
            )
        })
        .collect();
    for (k, op) in ops.iter().enumerate() {
        let mut v = [0i32];
        t.okay(
            world.allreduce(&[k as i32 + rank], &mut v, op),
            "allreduce with one of 50 ops",
        );
        t.eq(
            v[0],
            k as i32 * size + size * (size - 1) / 2,
            "each op its own closure",
        );
    }
}
