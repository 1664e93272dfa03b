//! Structured data: derived structs (padding never sent nor written, nested and array fields,
//! generic instantiations kept apart, over-aligned) through point-to-point, nonblocking,
//! persistent, collective, one-sided and user-reduction calls; elementwise structs reduced
//! field by field by the predefined ops and accumulated; every `DerivedType` constructor checked
//! against the elements a hand-written loop selects (through `MPI_Pack`); layouts sent and
//! received in place, 3-D halo faces at odd sizes, column tiles through the `v` collectives; packing, `external32`; bad layouts refused
//! before MPI runs (the last in `layouts` and `packing`).

mod blocks;
mod layouts;
mod packing;

use crate::checks::Checks;
use ferrompi::ErrorKind;
use ferrompi::{Equivalence, Mpi, UserOp, Window, window::Assert};

/// A struct with padding inside and at its end: 1 + 7 + 8 + 2 + 6 bytes.
#[derive(Equivalence, Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub(super) struct Padded {
    tag: u8,
    value: f64,
    id: u16,
}

/// Nested structs, arrays of them, a `bool`, a generic field.
#[derive(Equivalence, Clone, Copy, Debug, PartialEq)]
struct Inner {
    weight: f32,
    on: bool,
}

#[derive(Equivalence, Clone, Copy, Debug, PartialEq)]
#[repr(C)]
struct Outer {
    inners: [Inner; 2],
    serial: u64,
    at: Point<i16>,
}

#[derive(Equivalence, Clone, Copy, Debug, PartialEq, Default)]
struct Point<T> {
    x: T,
    y: T,
}

/// A tuple struct and a transparent newtype.
#[derive(Equivalence, Clone, Copy, Debug, PartialEq)]
struct Pair(i32, f64);

#[derive(Equivalence, Clone, Copy, Debug, PartialEq)]
#[repr(transparent)]
struct Meters(f64);

/// What a reduction combines: a sum and a count, and the largest value seen.
#[derive(Equivalence, Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub(super) struct Stats {
    sum: f64,
    count: u32,
    max: i64,
}

/// Structs of one element type: to MPI, runs of `f64`, `i32` or `bool`, reduced element by
/// element by the predefined ops. Nested, array and generic fields.
#[derive(Equivalence, Clone, Copy, Debug, PartialEq, Default)]
#[equivalence(elementwise)]
struct Vec3 {
    x: f64,
    y: f64,
    z: f64,
}

#[derive(Equivalence, Clone, Copy, Debug, PartialEq, Default)]
#[equivalence(elementwise)]
#[repr(C)]
struct Body {
    position: Vec3,
    velocity: [f64; 3],
    mass: f64,
}

#[derive(Equivalence, Clone, Copy, Debug, PartialEq, Default)]
#[equivalence(elementwise)]
struct Span<T> {
    low: T,
    high: [T; 2],
}

#[derive(Equivalence, Clone, Copy, Debug, PartialEq, Default)]
#[equivalence(elementwise)]
struct Flags(bool, [bool; 2]);

/// An over-aligned struct: 8 bytes of data in 32.
#[derive(Equivalence, Clone, Copy, Debug, PartialEq, Default)]
#[repr(C, align(32))]
struct Wide {
    value: f64,
}

const CANARY: u8 = 0xA5;

/// The offsets of `Padded`'s padding bytes.
fn padding() -> Vec<usize> {
    let fields = [
        (std::mem::offset_of!(Padded, tag), 1),
        (std::mem::offset_of!(Padded, value), 8),
        (std::mem::offset_of!(Padded, id), 2),
    ];
    (0..std::mem::size_of::<Padded>())
        .filter(|&b| !fields.iter().any(|&(at, len)| (at..at + len).contains(&b)))
        .collect()
}

pub(super) fn padded(seed: i32, k: usize) -> Padded {
    Padded {
        tag: (seed as u8).wrapping_mul(3).wrapping_add(k as u8),
        value: f64::from(seed) + k as f64 / 8.0,
        id: 1000u16.wrapping_add(seed as u16).wrapping_add(k as u16),
    }
}

/// Receive slots whose padding holds canaries.
pub(super) fn canaried(len: usize) -> Vec<Padded> {
    let mut slots = vec![padded(-1, 0); len];
    let holes = padding();
    let bytes = slots.as_mut_ptr().cast::<u8>();
    for i in 0..len {
        for &h in &holes {
            // SAFETY: inside the vector's `len * size_of::<Padded>()` bytes; a padding byte is
            // written through a `u8` pointer, no reference to it exists.
            unsafe {
                bytes
                    .add(i * std::mem::size_of::<Padded>() + h)
                    .write(CANARY)
            };
        }
    }
    slots
}

/// Whether every padding byte of `slots` still holds its canary.
pub(super) fn canaries_hold(slots: &[Padded]) -> bool {
    let holes = padding();
    let bytes = slots.as_ptr().cast::<u8>();
    (0..slots.len()).all(|i| {
        holes.iter().all(|&h| {
            // SAFETY: inside the slice's bytes; read as `u8` through the pointer, never as
            // part of a typed copy of the struct.
            unsafe { bytes.add(i * std::mem::size_of::<Padded>() + h).read() == CANARY }
        })
    })
}

fn outer(seed: i32) -> Outer {
    Outer {
        inners: [
            Inner {
                weight: seed as f32 * 0.5,
                on: seed % 2 == 0,
            },
            Inner {
                weight: -1.25,
                on: true,
            },
        ],
        serial: u64::MAX - seed as u64,
        at: Point {
            x: seed as i16,
            y: -(seed as i16),
        },
    }
}

pub fn run(mpi: &Mpi, t: &mut Checks) {
    let world = t.okay(mpi.world().dup(), "dup");
    let (rank, size) = (world.rank(), world.size());
    let (next, prev) = ((rank + 1) % size, (rank + size - 1) % size);

    structs(mpi, &world, t, next, prev);
    elementwise(&world, t, next);
    packing::decoding(mpi, t);
    layouts::builders(mpi, &world, t);
    layouts::layouts(mpi, &world, t, next, prev);
    layouts::halos(mpi, &world, t);
    layouts::one_sided(mpi, &world, t, next, prev);
    blocks::footprints(mpi, t);
    blocks::v_collectives(mpi, &world, t);
    blocks::persistent_v(mpi, &world, t);
    blocks::alltoallw(mpi, &world, t);
    packing::packing(mpi, &world, t);
    packing::refusals(mpi, &world, t);
    let _ = (rank, size);
}

fn structs(mpi: &Mpi, world: &ferrompi::Communicator<'_>, t: &mut Checks, next: i32, prev: i32) {
    let (rank, size) = (world.rank(), world.size());
    t.eq(Padded::ELEMENTS, 1, "a derived struct is one element");
    t.ok(
        !Padded::NEEDS_REPAIR && Outer::NEEDS_REPAIR,
        "NEEDS_REPAIR follows the fields (bool)",
    );
    t.ok(!padding().is_empty(), "Padded has padding to guard");

    // Blocking ring: the padding of what arrives keeps its canaries.
    let out: Vec<Padded> = (0..3).map(|k| padded(rank, k)).collect();
    let mut got = canaried(3);
    t.okay(
        world.sendrecv(&out, next, 1, &mut got, prev, 1),
        "sendrecv of structs",
    );
    t.eq(
        got.clone(),
        (0..3).map(|k| padded(prev, k)).collect::<Vec<_>>(),
        "structs arrived",
    );
    t.ok(
        canaries_hold(&got),
        "a blocking receive left the padding untouched",
    );
    let status = t.okay(
        world.sendrecv(&out, next, 2, &mut canaried(4), prev, 2),
        "sendrecv into more room",
    );
    t.eq_ok(status.count::<Padded>(), 3, "count of structs");
    t.eq_ok(
        status.elements::<Padded>(),
        9,
        "elements: three fields each",
    );

    // Nonblocking, in a scope.
    let mut later = canaried(3);
    t.okay(
        ferrompi::scope(|s| {
            let receiving = world.irecv(s, &mut later, prev, 3)?;
            world.send(&out, next, 3)?;
            receiving.wait().map(drop)
        }),
        "irecv of structs",
    );
    t.ok(
        later == got && canaries_hold(&later),
        "a nonblocking receive: same values, padding untouched",
    );

    // Persistent: a send_init of structs, started twice.
    let mut sender = t.okay(world.send_init(vec![padded(rank, 7)], next, 4), "send_init");
    for round in 0..2 {
        let mut one = canaried(1);
        let result = sender.start().and_then(|sending| {
            let status = world.recv(&mut one, prev, 4)?;
            sending.wait()?;
            Ok(status)
        });
        t.okay(result, format!("persistent round {round}"));
        t.ok(
            one[0] == padded(prev, 7) && canaries_hold(&one),
            "persistent struct arrived",
        );
    }

    // Collectives: allgather of nested, generic, bool-carrying structs; bcast; iallgather.
    let mine = [outer(rank)];
    let mut all = vec![outer(-1); size as usize];
    t.okay(
        world.allgather(&mine, &mut all),
        "allgather of nested structs",
    );
    t.eq(
        all,
        (0..size).map(outer).collect::<Vec<_>>(),
        "nested structs gathered",
    );
    let mut shared = [Point { x: 0.0f64, y: 0.0 }, Point { x: 0.0, y: 0.0 }];
    let mut ints = [Point { x: 0i32, y: 0 }];
    if rank == 0 {
        shared = [
            Point { x: 1.5, y: -2.5 },
            Point {
                x: 1e300,
                y: f64::MIN_POSITIVE,
            },
        ];
        ints = [Point { x: i32::MIN, y: 7 }];
    }
    t.okay(world.bcast(&mut shared, 0), "bcast of Point<f64>");
    t.okay(world.bcast(&mut ints, 0), "bcast of Point<i32>");
    t.eq(
        shared[1],
        Point {
            x: 1e300,
            y: f64::MIN_POSITIVE,
        },
        "Point<f64> broadcast",
    );
    t.eq(
        ints[0],
        Point { x: i32::MIN, y: 7 },
        "Point<i32> broadcast (its own datatype)",
    );
    t.ok(
        Point::<f64>::datatype() != Point::<i32>::datatype()
            && Point::<f64>::datatype() == Point::<f64>::datatype(),
        "generic instantiations keep datatypes of their own",
    );
    let pairs = [Pair(rank, f64::from(rank) * 0.5)];
    let mut every = vec![Pair(0, 0.0); size as usize];
    t.okay(
        ferrompi::scope(|s| world.iallgather(s, &pairs, &mut every)?.wait().map(drop)),
        "iallgather of tuple structs",
    );
    t.ok(
        every
            .iter()
            .enumerate()
            .all(|(r, p)| *p == Pair(r as i32, r as f64 * 0.5)),
        "tuple structs gathered",
    );
    let mut length = [Meters(0.0)];
    if rank == size - 1 {
        length[0] = Meters(42.5);
    }
    t.okay(
        world.bcast(&mut length, size - 1),
        "bcast of a transparent newtype",
    );
    t.eq(length[0], Meters(42.5), "newtype broadcast");

    // A user reduction over a struct, every rank.
    let op = t.okay(
        UserOp::<Stats>::commutative(mpi, |a, b| {
            for (x, y) in a.iter().zip(b.iter_mut()) {
                y.sum += x.sum;
                y.count += x.count;
                y.max = y.max.max(x.max);
            }
        }),
        "UserOp over a struct",
    );
    let local = [Stats {
        sum: f64::from(rank) + 0.5,
        count: 1,
        max: i64::from(rank) * 10,
    }];
    let mut total = [Stats {
        sum: 0.0,
        count: 0,
        max: 0,
    }];
    t.okay(
        world.allreduce(&local, &mut total, &op),
        "allreduce of a struct",
    );
    let n = f64::from(size);
    t.eq(
        total[0],
        Stats {
            sum: n * (n - 1.0) / 2.0 + 0.5 * n,
            count: size as u32,
            max: i64::from(size - 1) * 10,
        },
        "struct reduced",
    );

    // One-sided: put a struct into the next rank's window, read it back there.
    let win = t.okay(Window::<Padded>::allocate(world, 2), "window of structs");
    let put = win.lock_all(Assert::empty(), |epoch| {
        epoch.target(next)?.put_now(&[padded(rank, 5)], 1)
    });
    t.okay(put.and_then(|r| r), "put_now of a struct");
    t.okay(world.barrier(), "barrier after puts");
    let mut read = canaried(1);
    let got_back = win.lock_all(Assert::empty(), |epoch| {
        epoch.target(rank)?.get_now(&mut read, 1)
    });
    t.okay(got_back.and_then(|r| r), "get_now of a struct");
    t.eq(read[0], padded(prev, 5), "the struct a neighbour put");
    t.ok(canaries_hold(&read), "a get left the padding untouched");
    t.okay(world.barrier(), "barrier before the window's free");
    let six = [padded(rank, 6)];
    let acc = win.lock_all(Assert::empty(), |epoch| {
        epoch
            .target(next)?
            .accumulate(&six, 0, ferrompi::op::Replace)
    });
    t.ok(
        matches!(
            acc.as_ref()
                .map(|r| r.as_ref().map_err(ferrompi::Error::kind)),
            Ok(Err(ErrorKind::InvalidArgument { .. }))
        ),
        "an accumulate of a derived struct is refused before MPI (MPICH aborts on it)",
    );
    let acc = win.lock_all(Assert::empty(), |epoch| {
        epoch
            .target(next)?
            .fetch_and_op(padded(rank, 6), 0, ferrompi::op::NoOp)
    });
    t.ok(
        matches!(
            acc.as_ref()
                .map(|r| r.as_ref().map_err(ferrompi::Error::kind)),
            Ok(Err(ErrorKind::InvalidArgument { .. }))
        ),
        "a fetch_and_op of a derived struct is refused before MPI",
    );
    t.okay(world.barrier(), "barrier after");
}

/// `#[equivalence(elementwise)]` structs: their predefined datatypes and element counts, the
/// predefined reductions element by element (blocking, nonblocking, persistent, in place),
/// point-to-point, and one-sided accumulates, which take them.
fn elementwise(world: &ferrompi::Communicator<'_>, t: &mut Checks, next: i32) {
    use ferrompi::op::{LogicalOr, Max, Min, Sum};
    let (rank, size) = (world.rank(), world.size());
    let (r, n) = (f64::from(rank), f64::from(size));
    t.eq(
        (
            Vec3::ELEMENTS,
            Body::ELEMENTS,
            Span::<i32>::ELEMENTS,
            Flags::ELEMENTS,
        ),
        (3, 7, 3, 3),
        "elements per value",
    );
    t.ok(
        Body::datatype().as_raw() == f64::datatype().as_raw()
            && Span::<i32>::datatype().as_raw() == i32::datatype().as_raw()
            && Flags::datatype().as_raw() == bool::datatype().as_raw()
            && Body::PREDEFINED,
        "an elementwise struct travels as its element's predefined datatype",
    );
    let body = |k: f64| Body {
        position: Vec3 {
            x: k,
            y: 2.0 * k,
            z: -k,
        },
        velocity: [k + 0.5; 3],
        mass: 1.0 + k,
    };
    let mine = [body(r), body(r + 10.0)];
    let mut total = [Body::default(); 2];
    t.okay(
        world.allreduce(&mine, &mut total, Sum),
        "allreduce Sum of structs",
    );
    let sum = n * (n - 1.0) / 2.0; // of the ranks
    let expected = |shift: f64| Body {
        position: Vec3 {
            x: sum + shift * n,
            y: 2.0 * (sum + shift * n),
            z: -(sum + shift * n),
        },
        velocity: [sum + (shift + 0.5) * n; 3],
        mass: n + sum + shift * n,
    };
    t.eq(
        total,
        [expected(0.0), expected(10.0)],
        "summed field by field",
    );

    let mut span = [Span {
        low: rank,
        high: [-rank, rank * 3],
    }];
    t.okay(
        world.allreduce_in_place(&mut span, Max),
        "allreduce_in_place Max",
    );
    t.eq(
        span[0],
        Span {
            low: size - 1,
            high: [0, (size - 1) * 3],
        },
        "largest of each field",
    );
    let mut lowest = Span::default();
    let mine = [Span {
        low: rank + 5,
        high: [rank, -rank],
    }];
    t.okay(
        world.reduce(&mine, std::slice::from_mut(&mut lowest), Min, 0),
        "reduce Min to the root",
    );
    if rank == 0 {
        t.eq(
            lowest,
            Span {
                low: 5,
                high: [0, -(size - 1)],
            },
            "smallest of each field",
        );
    }
    let mut any = [Flags(rank == 0, [rank == size - 1, false])];
    t.okay(
        world.allreduce_in_place(&mut any, LogicalOr),
        "allreduce LogicalOr of bools",
    );
    t.eq(any[0], Flags(true, [true, false]), "or of each field");

    let mut started = [Vec3::default()];
    let mine = [Vec3 {
        x: 1.0,
        y: r,
        z: 2.0,
    }];
    t.okay(
        ferrompi::scope(|s| {
            world
                .iallreduce(s, &mine, &mut started, Sum)?
                .wait()
                .map(drop)
        }),
        "iallreduce Sum of structs",
    );
    t.eq(
        started[0],
        Vec3 {
            x: n,
            y: sum,
            z: 2.0 * n,
        },
        "nonblocking sum",
    );
    let mut persistent = t.okay(
        world.allreduce_init(
            vec![Vec3 {
                x: r,
                y: 1.0,
                z: 0.0,
            }],
            vec![Vec3::default()],
            Sum,
        ),
        "allreduce_init of structs",
    );
    for round in 0..3 {
        t.okay(
            persistent.start().and_then(|a| a.wait()),
            "persistent start + wait",
        );
        t.eq(
            persistent.recv()[0],
            Vec3 {
                x: sum,
                y: n,
                z: 0.0,
            },
            format!("round {round}"),
        );
    }

    // Point-to-point: a run of f64s, received as one.
    let mut got = [Vec3::default(); 2];
    let out = [
        Vec3 { x: r, y: r, z: r },
        Vec3 {
            x: -r,
            y: 0.5,
            z: 1.5,
        },
    ];
    t.okay(
        world.sendrecv(&out, next, 7, &mut got, ferrompi::ANY_SOURCE, 7),
        "sendrecv of structs",
    );
    let prev = f64::from((rank + size - 1) % size);
    t.eq(
        got,
        [
            Vec3 {
                x: prev,
                y: prev,
                z: prev,
            },
            Vec3 {
                x: -prev,
                y: 0.5,
                z: 1.5,
            },
        ],
        "received",
    );

    let mut wide = [Wide::default(); 2];
    t.okay(
        world.sendrecv(
            &[Wide { value: r }, Wide { value: -r }],
            next,
            8,
            &mut wide,
            ferrompi::ANY_SOURCE,
            8,
        ),
        "sendrecv of an over-aligned struct",
    );
    t.eq(
        wide,
        [Wide { value: prev }, Wide { value: -prev }],
        "over-aligned structs received",
    );

    // One-sided: an accumulate of a struct is an accumulate of its elements.
    let win = t.okay(
        Window::<Vec3>::allocate(world, 1),
        "window of elementwise structs",
    );
    t.okay(world.barrier(), "barrier before accumulates");
    let one = [Vec3 {
        x: 1.0,
        y: r,
        z: -1.0,
    }];
    let acc = win.lock_all(Assert::empty(), |epoch| {
        epoch.target(next)?.accumulate(&one, 0, Sum)?;
        epoch.flush_all()
    });
    t.okay(acc.and_then(|r| r), "accumulate Sum of a struct");
    t.okay(world.barrier(), "barrier after accumulates");
    let mut here = [Vec3::default()];
    let read = win.lock_all(Assert::empty(), |epoch| {
        epoch.target(rank)?.get_now(&mut here, 0)
    });
    t.okay(read.and_then(|r| r), "get_now of the accumulated struct");
    t.eq(
        here[0],
        Vec3 {
            x: 1.0,
            y: prev,
            z: -1.0,
        },
        "accumulated from the previous rank",
    );
    t.okay(world.barrier(), "barrier before the window's free");
}
