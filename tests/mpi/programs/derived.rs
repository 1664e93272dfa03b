//! Structured data: derived structs (padding never sent nor written, nested and array fields,
//! generic instantiations kept apart, over-aligned) through point-to-point, nonblocking,
//! persistent, collective, one-sided and user-reduction calls; elementwise structs reduced
//! field by field by the predefined ops and accumulated; every `DerivedType` constructor checked
//! against the elements a hand-written loop selects (through `MPI_Pack`); layouts sent and
//! received in place, 3-D halo faces at odd sizes; packing, `external32`; bad layouts refused
//! before MPI runs.

use crate::checks::Checks;
use ferrompi::datatype::pack::{pack_external, pack_external_size, unpack_external};
use ferrompi::{
    DerivedType, Distribution, Equivalence, Error, Mpi, Order, UserOp, Window, window::Assert,
};

/// A struct with padding inside and at its end: 1 + 7 + 8 + 2 + 6 bytes.
#[derive(Equivalence, Clone, Copy, Debug, PartialEq)]
#[repr(C)]
struct Padded {
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
struct Stats {
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

fn padded(seed: i32, k: usize) -> Padded {
    Padded {
        tag: (seed as u8).wrapping_mul(3).wrapping_add(k as u8),
        value: f64::from(seed) + k as f64 / 8.0,
        id: 1000u16.wrapping_add(seed as u16).wrapping_add(k as u16),
    }
}

/// Receive slots whose padding holds canaries.
fn canaried(len: usize) -> Vec<Padded> {
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
fn canaries_hold(slots: &[Padded]) -> bool {
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
    decoding(mpi, t);
    builders(mpi, &world, t);
    layouts(mpi, &world, t, next, prev);
    halos(mpi, &world, t);
    one_sided(mpi, &world, t, next, prev);
    packing(mpi, &world, t);
    refusals(mpi, &world, t);
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
        matches!(acc, Ok(Err(Error::InvalidArgument { .. }))),
        "an accumulate of a derived struct is refused before MPI (MPICH aborts on it)",
    );
    let acc = win.lock_all(Assert::empty(), |epoch| {
        epoch
            .target(next)?
            .fetch_and_op(padded(rank, 6), 0, ferrompi::op::NoOp)
    });
    t.ok(
        matches!(acc, Ok(Err(Error::InvalidArgument { .. }))),
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

/// Fills `n` values with their index, packs `count` copies of `ty` over them, and returns
/// the packed values in order: the elements the type selects.
fn selected(
    world: &ferrompi::Communicator<'_>,
    ty: &DerivedType<'_>,
    n: usize,
    count: usize,
) -> Result<Vec<f64>, Error> {
    let values: Vec<f64> = (0..n).map(|i| i as f64).collect();
    let view = ty.view(&values, count)?;
    let mut bytes = vec![0u8; world.pack_size(&view)?];
    let mut at = 0;
    world.pack(&view, &mut bytes, &mut at)?;
    let mut back = vec![0.0f64; at / 8];
    let mut read = 0;
    world.unpack(&bytes[..at], &mut read, &mut back[..])?;
    Ok(back)
}

fn builders(mpi: &Mpi, world: &ferrompi::Communicator<'_>, t: &mut Checks) {
    let f = f64::datatype();
    let idx = |v: &[usize]| v.iter().map(|&i| i as f64).collect::<Vec<f64>>();
    type Case<'m> = (
        &'static str,
        Result<DerivedType<'m>, Error>,
        usize,
        usize,
        Vec<f64>,
    );
    let cases: Vec<Case<'_>> = vec![
        (
            "contiguous",
            DerivedType::contiguous(mpi, 3, f),
            8,
            2,
            idx(&[0, 1, 2, 3, 4, 5]),
        ),
        (
            "vector",
            DerivedType::vector(mpi, 3, 2, 5, f),
            12,
            1,
            idx(&[0, 1, 5, 6, 10, 11]),
        ),
        (
            "hvector",
            DerivedType::hvector(mpi, 2, 1, 24, f),
            8,
            1,
            idx(&[0, 3]),
        ),
        (
            "indexed",
            DerivedType::indexed(mpi, &[2, 1], &[1, 6], f),
            8,
            1,
            idx(&[1, 2, 6]),
        ),
        (
            "hindexed",
            DerivedType::hindexed(mpi, &[1, 2], &[40, 8], f),
            8,
            1,
            idx(&[5, 1, 2]),
        ),
        (
            "indexed_block",
            DerivedType::indexed_block(mpi, 2, &[4, 0], f),
            8,
            1,
            idx(&[4, 5, 0, 1]),
        ),
        (
            "hindexed_block",
            DerivedType::hindexed_block(mpi, 1, &[16, 56], f),
            8,
            1,
            idx(&[2, 7]),
        ),
        (
            "subarray C",
            DerivedType::subarray(mpi, &[3, 4], &[2, 2], &[1, 1], Order::C, f),
            12,
            1,
            idx(&[5, 6, 9, 10]),
        ),
        (
            "subarray Fortran",
            DerivedType::subarray(mpi, &[3, 4], &[2, 2], &[1, 1], Order::Fortran, f),
            12,
            1,
            idx(&[4, 5, 7, 8]),
        ),
        (
            "resized",
            DerivedType::resized(mpi, f, 0, 24),
            8,
            3,
            idx(&[0, 3, 6]),
        ),
        (
            "darray block",
            DerivedType::darray(
                mpi,
                2,
                1,
                &[8],
                &[Distribution::Block(None)],
                &[2],
                Order::C,
                f,
            ),
            8,
            1,
            idx(&[4, 5, 6, 7]),
        ),
        (
            "darray cyclic(2)",
            DerivedType::darray(
                mpi,
                2,
                0,
                &[8],
                &[Distribution::Cyclic(Some(2))],
                &[2],
                Order::C,
                f,
            ),
            8,
            1,
            idx(&[0, 1, 4, 5]),
        ),
    ];
    for (name, made, n, count, want) in cases {
        let ty = t.okay(made, format!("{name}: made"));
        t.eq_ok(
            selected(world, &ty, n, count),
            want,
            format!("{name}: selects what C would"),
        );
    }
    // A struct of two types, a vector of a vector, and a dup: against their pack too.
    let column = t.okay(DerivedType::vector(mpi, 3, 1, 4, f), "column");
    let columns = t.okay(
        DerivedType::resized(mpi, &column, 0, 8),
        "column, one f64 apart",
    );
    let two = t.okay(DerivedType::contiguous(mpi, 2, &columns), "two columns");
    t.eq_ok(
        selected(world, &two, 12, 1),
        idx(&[0, 4, 8, 1, 5, 9]),
        "nested: two columns",
    );
    let copy = t.okay(two.dup(), "dup");
    t.eq(copy.bounds(), two.bounds(), "dup: same bounds");
    t.eq_ok(
        selected(world, &copy, 12, 1),
        idx(&[0, 4, 8, 1, 5, 9]),
        "dup selects the same",
    );
    let mixed = t.okay(
        DerivedType::create_struct(mpi, &[1, 2], &[16, 0], &[f.into(), i32::datatype().into()]),
        "create_struct",
    );
    let b = mixed.bounds();
    t.eq(
        (b.size, b.true_lb, b.true_extent),
        (16, 0, 24),
        "create_struct: bounds",
    );
    let three_d = t.okay(
        DerivedType::darray(
            mpi,
            4,
            3,
            &[4, 6],
            &[Distribution::Block(None), Distribution::Block(None)],
            &[2, 2],
            Order::C,
            f,
        ),
        "darray 2 x 2 grid",
    );
    // Process 3 of a 2 x 2 grid holds rows 2..4, columns 3..6.
    t.eq_ok(
        selected(world, &three_d, 24, 1),
        idx(&[15, 16, 17, 21, 22, 23]),
        "darray: the last process's quarter",
    );
}

fn layouts(mpi: &Mpi, world: &ferrompi::Communicator<'_>, t: &mut Checks, next: i32, prev: i32) {
    let rank = world.rank();
    // A 4 x 5 row-major matrix; column 2 goes to the next rank's column 4.
    let column = t.okay(
        DerivedType::vector(mpi, 4, 1, 5, f64::datatype()),
        "column type",
    );
    let matrix: Vec<f64> = (0..20)
        .map(|i| f64::from(rank) * 100.0 + f64::from(i))
        .collect();
    let mut into = vec![-1.0f64; 20];
    let send = t.okay(column.view(&matrix[2..], 1), "view of column 2");
    let recv = t.okay(column.view_mut(&mut into[4..], 1), "view of column 4");
    let result = ferrompi::scope(|s| {
        let receiving = world.irecv_view(s, recv, prev, 10)?;
        world.send_view(send, next, 10)?;
        receiving.wait().map(drop)
    });
    t.okay(result, "column sent, received nonblocking");
    let want: Vec<f64> = (0..20)
        .map(|i| {
            if i % 5 == 4 {
                f64::from(prev) * 100.0 + f64::from(i - 2)
            } else {
                -1.0
            }
        })
        .collect();
    t.eq(into.clone(), want.clone(), "only column 4 was written");
    // The other way round: isend_view, recv_view, and ssend_view into a plain slice.
    let mut again = vec![-1.0f64; 20];
    let result = ferrompi::scope(|s| {
        let sending = world.isend_view(s, column.view(&matrix[2..], 1)?, next, 11)?;
        world.recv_view(column.view_mut(&mut again[4..], 1)?, prev, 11)?;
        sending.wait().map(drop)
    });
    t.okay(result, "isend_view + recv_view");
    t.eq(again, want, "isend_view + recv_view: only column 4");
    let mut flat = [0.0f64; 4];
    let result = ferrompi::scope(|s| {
        let receiving = world.irecv(s, &mut flat, prev, 12)?;
        world.ssend_view(column.view(&matrix, 1)?, next, 12)?;
        receiving.wait().map(drop)
    });
    t.okay(result, "ssend_view into a slice");
    let p = f64::from(prev) * 100.0;
    t.eq(
        flat,
        [p, p + 5.0, p + 10.0, p + 15.0],
        "a column arrives as a run of values",
    );

    // Persistent: column 2 of a matrix the request owns, to the next rank's column 4, at
    // every start (subarrays carry the column's offset).
    let at = |column: usize| {
        DerivedType::subarray(
            mpi,
            &[4, 5],
            &[4, 1],
            &[0, column],
            Order::C,
            f64::datatype(),
        )
    };
    let (two, four) = (t.okay(at(2), "column 2"), t.okay(at(4), "column 4"));
    let mut sending = t.okay(
        world.send_init_view(matrix.clone(), &two, 1, next, 13),
        "send_init_view",
    );
    let mut receiving = t.okay(
        world.recv_init_view(vec![-1.0f64; 20], &four, 1, prev, 13),
        "recv_init_view",
    );
    for round in 0..3 {
        for (i, x) in sending.buffer_mut().iter_mut().enumerate() {
            *x = f64::from(rank) * 100.0 + f64::from(round * 20 + i as i32);
        }
        let result = receiving.start().and_then(|active| {
            sending.start()?.wait()?;
            active.wait()
        });
        t.okay(result, format!("persistent column exchange, round {round}"));
        let want: Vec<f64> = (0..20)
            .map(|i| {
                if i % 5 == 4 {
                    f64::from(prev) * 100.0 + f64::from(round * 20 + i - 2)
                } else {
                    -1.0
                }
            })
            .collect();
        t.eq(
            receiving.buffer().to_vec(),
            want,
            format!("round {round}: only column 4 was written"),
        );
    }
    t.ok(
        matches!(
            world.send_init_view(vec![0.0f64; 20], &column, 2, next, 13),
            Err(Error::InvalidArgument { .. })
        ) && matches!(
            world.recv_init_view(vec![0.0f64; 19], &four, 1, prev, 13),
            Err(Error::InvalidArgument { .. })
        ),
        "a persistent layout reaching past its buffer is refused",
    );
    drop((sending, receiving));

    // A struct field of every record: the `value` of each Padded, by hvector.
    let values = t.okay(
        DerivedType::hvector(
            mpi,
            3,
            1,
            std::mem::size_of::<Padded>() as isize,
            f64::datatype(),
        ),
        "hvector over records",
    );
    // Shifted to the field: one struct block of the hvector at the field's offset.
    let base = std::mem::offset_of!(Padded, value) as isize;
    let field = t.okay(
        DerivedType::create_struct(mpi, &[1], &[base], &[(&values).into()]),
        "the hvector at the field's offset",
    );
    let records: Vec<Padded> = (0..3).map(|k| padded(rank, k)).collect();
    let mut got = [0.0f64; 3];
    let view = t.okay(field.view(&records, 1), "view of each record's value");
    t.okay(
        world.sendrecv_view(view, next, 13, &mut got, prev, 13),
        "sendrecv_view of a field",
    );
    t.eq(
        got.to_vec(),
        (0..3).map(|k| padded(prev, k).value).collect::<Vec<_>>(),
        "each record's value",
    );

    // The equal-block collectives on views: a distributed transpose by alltoall (columns
    // sent, rows received), columns gathered, scattered and allgathered.
    let n = world.size() as usize;
    let me = rank as usize;
    let col = t.okay(
        DerivedType::vector(mpi, n, 1, n as isize, f64::datatype()),
        "n x n column",
    );
    let cols = t.okay(
        DerivedType::resized(mpi, &col, 0, 8),
        "columns one f64 apart",
    );
    let row = t.okay(DerivedType::contiguous(mpi, n, f64::datatype()), "row");
    let square: Vec<f64> = (0..n * n).map(|k| (me * 1000 + k) as f64).collect();
    let mut rows = vec![-1.0f64; n * n];
    let sent = cols.view(&square, n).and_then(|send| {
        let recv = row.view_mut(&mut rows, n)?;
        world.alltoall_view(send, recv)
    });
    t.okay(sent, "alltoall_view");
    t.ok(
        (0..n).all(|q| (0..n).all(|i| rows[q * n + i] == (q * 1000 + i * n + me) as f64)),
        "alltoall_view transposed: row q is column `me` of rank q",
    );
    let mut gathered = vec![-1.0f64; n * n];
    let root = (n - 1) as i32;
    let sent = col.view(&square[me % n..], 1).and_then(|send| {
        let recv = row.view_mut(&mut gathered, if rank == root { n } else { 0 })?;
        world.gather_view(send, recv, root)
    });
    t.okay(sent, "gather_view");
    if rank == root {
        t.ok(
            (0..n)
                .all(|q| (0..n).all(|i| gathered[q * n + i] == (q * 1000 + i * n + q % n) as f64)),
            "gather_view: column q of rank q, in rank order",
        );
    }
    let mut mine = vec![-1.0f64; n];
    let sent = cols
        .view(&square, if rank == root { n } else { 0 })
        .and_then(|send| {
            let recv = row.view_mut(&mut mine, 1)?;
            world.scatter_view(send, recv, root)
        });
    t.okay(sent, "scatter_view");
    t.ok(
        (0..n).all(|i| mine[i] == (n - 1) as f64 * 1000.0 + (i * n + me) as f64),
        "scatter_view: column `me` of the root's matrix",
    );
    let mut everyone = vec![-1.0f64; n * n];
    let sent = col.view(&square, 1).and_then(|send| {
        let recv = row.view_mut(&mut everyone, n)?;
        world.allgather_view(send, recv)
    });
    t.okay(sent, "allgather_view");
    t.ok(
        (0..n).all(|q| (0..n).all(|i| everyone[q * n + i] == (q * 1000 + i * n) as f64)),
        "allgather_view: column 0 of every rank",
    );
    // The same four, started in a scope and waited for together: the same results.
    let (mut rows2, mut gathered2) = (vec![-1.0f64; n * n], vec![-1.0f64; n * n]);
    let (mut mine2, mut everyone2) = (vec![-1.0f64; n], vec![-1.0f64; n * n]);
    let started = ferrompi::scope(|s| {
        let transpose =
            world.ialltoall_view(s, cols.view(&square, n)?, row.view_mut(&mut rows2, n)?)?;
        let gather = world.igather_view(
            s,
            col.view(&square[me % n..], 1)?,
            row.view_mut(&mut gathered2, if rank == root { n } else { 0 })?,
            root,
        )?;
        let scatter = world.iscatter_view(
            s,
            cols.view(&square, if rank == root { n } else { 0 })?,
            row.view_mut(&mut mine2, 1)?,
            root,
        )?;
        let allgather =
            world.iallgather_view(s, col.view(&square, 1)?, row.view_mut(&mut everyone2, n)?)?;
        let mut all = ferrompi::RequestSet::with_capacity(s, 4);
        for request in [transpose, gather, scatter, allgather] {
            all.push(request);
        }
        all.wait_all()
    });
    t.okay(
        started,
        "ialltoall_view, igather_view, iscatter_view, iallgather_view",
    );
    t.eq(rows2, rows.clone(), "ialltoall_view: as alltoall_view");
    if rank == root {
        t.eq(gathered2, gathered.clone(), "igather_view: as gather_view");
    }
    t.eq(mine2, mine.clone(), "iscatter_view: as scatter_view");
    t.eq(
        everyone2,
        everyone.clone(),
        "iallgather_view: as allgather_view",
    );
    if n > 1 {
        let mut odd = vec![0.0f64; (n + 1) * n];
        let refused = ferrompi::scope(|s| {
            world
                .ialltoall_view(s, cols.view(&square, n)?, row.view_mut(&mut odd, n + 1)?)
                .map(drop)
        });
        t.ok(
            matches!(refused, Err(Error::InvalidArgument { .. })),
            "ialltoall_view: a receive view that does not divide among the ranks",
        );
    }

    let mut wide = vec![0.0f64; (n + 1) * n];
    let recv = t.okay(row.view_mut(&mut wide, n + 1), "a view of n + 1 rows");
    let send = t.okay(col.view(&square, 1), "a column");
    let result = world.allgather_view(send, recv);
    if n > 1 {
        t.ok(
            matches!(result, Err(Error::InvalidArgument { .. })),
            "a receive view that does not divide among the ranks",
        );
    } else {
        t.okay(result, "n + 1 rows divide among one rank");
    }

    // bcast_view: the interior of a 4 x 4 grid from the last rank.
    let interior = t.okay(
        DerivedType::subarray(mpi, &[4, 4], &[2, 2], &[1, 1], Order::C, i32::datatype()),
        "interior",
    );
    let root = world.size() - 1;
    let mut grid = [-1i32; 16];
    if rank == root {
        grid = std::array::from_fn(|i| i as i32);
    }
    let view = t.okay(interior.view_mut(&mut grid, 1), "view of the interior");
    t.okay(world.bcast_view(view, root), "bcast_view");
    let inside = |i: usize| (1..3).contains(&(i / 4)) && (1..3).contains(&(i % 4));
    t.ok(
        grid.iter().enumerate().all(|(i, &v)| {
            v == if inside(i) || rank == root {
                i as i32
            } else {
                -1
            }
        }),
        "bcast_view wrote the interior only",
    );
    let mut again = [-1i32; 16];
    if rank == root {
        again = std::array::from_fn(|i| i as i32 * 2);
    }
    let started = ferrompi::scope(|s| {
        world
            .ibcast_view(s, interior.view_mut(&mut again, 1)?, root)?
            .wait()
            .map(drop)
    });
    t.okay(started, "ibcast_view");
    t.ok(
        again.iter().enumerate().all(|(i, &v)| {
            v == if inside(i) || rank == root {
                i as i32 * 2
            } else {
                -1
            }
        }),
        "ibcast_view wrote the interior only",
    );
}

/// One-sided calls on layouts: a column put into the next rank's matrix and read back by
/// `get_view`, the same complete on return in a passive epoch, and layouts reaching outside
/// the target's window refused before MPI runs.
fn one_sided(mpi: &Mpi, world: &ferrompi::Communicator<'_>, t: &mut Checks, next: i32, prev: i32) {
    let rank = world.rank();
    // A 4 x 3 row-major matrix per rank; column 1 of the next rank's gets my four values.
    let win = t.okay(
        Window::<f64>::allocate(world, 12),
        "window of a 4 x 3 matrix",
    );
    let column = t.okay(DerivedType::vector(mpi, 4, 1, 3, f64::datatype()), "column");
    let four = t.okay(
        DerivedType::contiguous(mpi, 4, f64::datatype()),
        "four in a row",
    );
    let mine: Vec<f64> = (0..4).map(|i| f64::from(rank * 10 + i)).collect();
    let put = win.fence(Assert::empty(), |epoch| {
        epoch.put_view(four.view(&mine, 1)?, next, 1, &column, 1)
    });
    t.okay(put.and_then(|r| r), "put_view of a column");
    let mut matrix = [-1.0f64; 12];
    let read = win.fence(Assert::empty(), |epoch| epoch.get(&mut matrix, rank, 0));
    t.okay(read.and_then(|r| r), "get of the matrix");
    let want: Vec<f64> = (0..12)
        .map(|k| {
            if k % 3 == 1 {
                f64::from(prev * 10 + k / 3)
            } else {
                0.0
            }
        })
        .collect();
    t.eq(matrix.to_vec(), want, "put_view wrote column 1 only");
    // Read the next rank's column 1 (my own values) into every other slot of eight.
    let every_other = t.okay(
        DerivedType::vector(mpi, 4, 1, 2, f64::datatype()),
        "every other",
    );
    let mut back = [-1.0f64; 8];
    let got = win.fence(Assert::empty(), |epoch| {
        epoch.get_view(every_other.view_mut(&mut back, 1)?, next, 1, &column, 1)
    });
    t.okay(got.and_then(|r| r), "get_view of a column");
    t.eq(
        back,
        [mine[0], -1.0, mine[1], -1.0, mine[2], -1.0, mine[3], -1.0],
        "get_view: my column back from the next rank, into every other slot",
    );
    t.okay(
        win.fence(Assert::NOSUCCEED, |_| ()),
        "fence before the passive epoch",
    );

    // Complete on return: column 2 of my own matrix, in a passive epoch.
    let twice: Vec<f64> = mine.iter().map(|x| x * 2.0).collect();
    let mut again = [0.0f64; 4];
    let passive = win.lock_all(Assert::empty(), |epoch| {
        epoch.put_view_now(four.view(&twice, 1)?, rank, 2, &column, 1)?;
        epoch.get_view_now(four.view_mut(&mut again, 1)?, rank, 2, &column, 1)
    });
    t.okay(passive.and_then(|r| r), "put_view_now + get_view_now");
    t.eq(
        again.to_vec(),
        twice,
        "the column written and read back on return",
    );

    // Refused before MPI: past the window's end (a column from element 3 reaches element 12),
    // before its start (a lower bound of -8 at element 0), a count too many, and the
    // complete-on-return form in an active epoch.
    let before = t.okay(
        DerivedType::create_struct(mpi, &[1], &[-8], &[f64::datatype().into()]),
        "a type reaching 8 bytes before its origin",
    );
    let refusals = win.fence(Assert::empty(), |epoch| {
        [
            epoch.put_view(four.view(&mine, 1).unwrap(), next, 3, &column, 1),
            epoch.put_view(four.view(&mine, 1).unwrap(), next, 0, &before, 1),
            epoch.put_view(four.view(&mine, 1).unwrap(), next, 0, &column, 2),
            epoch.put_view(four.view(&mine, 1).unwrap(), world.size(), 0, &column, 1),
        ]
        .map(|r| r.err())
    });
    let refusals = t.okay(refusals, "fence of refusals");
    t.ok(
        matches!(refusals[0], Some(Error::OutOfBounds { .. }))
            && matches!(refusals[1], Some(Error::OutOfBounds { .. }))
            && matches!(refusals[2], Some(Error::OutOfBounds { .. }))
            && matches!(refusals[3], Some(Error::InvalidRank { .. })),
        format!("layouts outside the target's window refused: {refusals:?}"),
    );
    let active = win.fence(Assert::empty(), |epoch| {
        epoch.put_view_now(four.view(&mine, 1)?, next, 1, &column, 1)
    });
    t.ok(
        matches!(active, Ok(Err(Error::EpochMisuse { .. }))),
        "put_view_now in a fence epoch refused",
    );
    t.okay(win.fence(Assert::NOSUCCEED, |_| ()), "closing fence");
}

/// Halo faces of a 3-D block at odd sizes: each of the six faces, packed by a subarray type,
/// holds the elements a triple loop over the face selects.
fn halos(mpi: &Mpi, world: &ferrompi::Communicator<'_>, t: &mut Checks) {
    let dims = [5usize, 3, 7];
    let n: usize = dims.iter().product();
    for axis in 0..3 {
        for side in [0, dims[axis] - 1] {
            let mut sub = dims;
            sub[axis] = 1;
            let mut start = [0usize; 3];
            start[axis] = side;
            let face = t.okay(
                DerivedType::subarray(mpi, &dims, &sub, &start, Order::C, f64::datatype()),
                format!("face {axis}/{side}"),
            );
            let mut want = Vec::new();
            for i in start[0]..start[0] + sub[0] {
                for j in start[1]..start[1] + sub[1] {
                    for k in start[2]..start[2] + sub[2] {
                        want.push(((i * dims[1] + j) * dims[2] + k) as f64);
                    }
                }
            }
            t.eq_ok(
                selected(world, &face, n, 1),
                want,
                format!("face {axis}/{side}: elements"),
            );
        }
    }
    // The whole exchange: send the high x-face, receive into the low ghost face of a copy.
    let (rank, size) = (world.rank(), world.size());
    let (next, prev) = ((rank + 1) % size, (rank + size - 1) % size);
    let high = t.okay(
        DerivedType::subarray(
            mpi,
            &dims,
            &[1, 3, 7],
            &[3, 0, 0],
            Order::C,
            f64::datatype(),
        ),
        "interior high face",
    );
    let ghost = t.okay(
        DerivedType::subarray(
            mpi,
            &dims,
            &[1, 3, 7],
            &[0, 0, 0],
            Order::C,
            f64::datatype(),
        ),
        "low ghost face",
    );
    let block: Vec<f64> = (0..n)
        .map(|i| f64::from(rank) * 1000.0 + i as f64)
        .collect();
    let mut ghosts = vec![-1.0f64; n];
    let result = ferrompi::scope(|s| {
        let receiving = world.irecv_view(s, ghost.view_mut(&mut ghosts, 1)?, prev, 20)?;
        world.send_view(high.view(&block, 1)?, next, 20)?;
        receiving.wait().map(drop)
    });
    t.okay(result, "halo exchange");
    let ok = (0..n).all(|i| {
        if i < 21 {
            ghosts[i] == f64::from(prev) * 1000.0 + (i + 3 * 21) as f64
        } else {
            ghosts[i] == -1.0
        }
    });
    t.ok(
        ok,
        "the ghost face holds the neighbour's high face, nothing else written",
    );
}

fn packing(mpi: &Mpi, world: &ferrompi::Communicator<'_>, t: &mut Checks) {
    let rank = world.rank();
    // Structs and a view in one packed message, sent as bytes.
    let records: Vec<Padded> = (0..2).map(|k| padded(rank, k)).collect();
    let every_other = t.okay(
        DerivedType::vector(mpi, 3, 1, 2, i64::datatype()),
        "every other",
    );
    let longs = [10i64, -1, 20, -1, 30];
    let view = t.okay(every_other.view(&longs, 1), "view to pack");
    let room = t.okay(world.pack_size(&records[..]), "pack_size")
        + t.okay(world.pack_size(&view), "pack_size of a view");
    let mut bytes = vec![0u8; room];
    let mut at = 0;
    t.okay(
        world.pack(&records[..], &mut bytes, &mut at),
        "pack structs",
    );
    t.okay(world.pack(&view, &mut bytes, &mut at), "pack a view");
    let mut back = canaried(2);
    let mut spread = [0i64; 5];
    let mut read = 0;
    t.okay(
        world.unpack(&bytes[..at], &mut read, &mut back[..]),
        "unpack structs",
    );
    let into = t.okay(every_other.view_mut(&mut spread, 1), "view to unpack into");
    let mut into = into;
    t.okay(
        world.unpack(&bytes[..at], &mut read, &mut into),
        "unpack into a view",
    );
    t.ok(
        back == records && canaries_hold(&back),
        "packed structs back, padding untouched",
    );
    t.eq(spread, [10, 0, 20, 0, 30], "packed view back in place");
    t.eq(read, at, "unpacked what was packed");

    // external32: big-endian, and round trips a struct.
    let numbers = [1.5f64, -2.0];
    let need = t.okay(pack_external_size(&numbers[..]), "pack_external_size");
    let mut portable = vec![0u8; need];
    let mut at = 0;
    t.okay(
        pack_external(&numbers[..], &mut portable, &mut at),
        "pack_external",
    );
    t.eq(
        portable[..8].to_vec(),
        1.5f64.to_be_bytes().to_vec(),
        "external32 is big-endian",
    );
    let mut again = [0.0f64; 2];
    let mut read = 0;
    t.okay(
        unpack_external(&portable, &mut read, &mut again[..]),
        "unpack_external",
    );
    t.eq(again, numbers, "external32 round trip");
    let one = [Stats {
        sum: 2.5,
        count: 3,
        max: -4,
    }];
    if ferrompi::IMPLEMENTATION != ferrompi::Implementation::OpenMpi {
        t.ok(
            matches!(pack_external_size(&one[..]), Err(Error::Unsupported { .. })),
            "external32 of a struct is refused outside Open MPI (MPICH aborts on it)",
        );
        return;
    }
    let need = t.okay(pack_external_size(&one[..]), "external32 size of a struct");
    t.eq(need, 8 + 4 + 8, "external32 packs fields only");
    let mut portable = vec![0u8; need];
    let (mut at, mut read) = (0, 0);
    t.okay(
        pack_external(&one[..], &mut portable, &mut at),
        "pack_external of a struct",
    );
    let mut two = [Stats {
        sum: 0.0,
        count: 0,
        max: 0,
    }];
    t.okay(
        unpack_external(&portable, &mut read, &mut two[..]),
        "unpack_external of a struct",
    );
    t.eq(two, one, "a struct through external32");
}

/// Decoding: each constructor's envelope and contents, a derived struct's datatype, and the
/// derived types among the contents (owned, decodable in turn).
fn decoding(mpi: &Mpi, t: &mut Checks) {
    use ferrompi::datatype::{Combiner, ContentType, TypeRef};
    let f = f64::datatype();
    let named = TypeRef::from(f).envelope();
    t.eq_ok(
        named.map(|e| e.combiner),
        Combiner::Named,
        "a predefined type is named",
    );
    let vector = t.okay(DerivedType::vector(mpi, 3, 2, 5, f), "vector");
    let contents = t.okay(vector.contents(), "vector's contents");
    t.eq(
        contents.integers.clone(),
        vec![3, 2, 5],
        "vector: count, blocklength, stride",
    );
    t.ok(
        matches!(contents.datatypes[..], [ContentType::Named(d)] if d == f),
        "vector: of MPI_DOUBLE",
    );
    let subarray = t.okay(
        DerivedType::subarray(mpi, &[5, 3, 7], &[1, 3, 7], &[4, 0, 0], Order::C, f),
        "subarray",
    );
    t.eq_ok(
        subarray.envelope().map(|e| e.combiner),
        Combiner::Subarray,
        "subarray's combiner",
    );
    let contents = t.okay(subarray.contents(), "subarray's contents");
    t.eq(
        contents
            .integers
            .iter()
            .take(10)
            .copied()
            .collect::<Vec<_>>(),
        vec![3, 5, 3, 7, 1, 3, 7, 4, 0, 0],
        "subarray: ndims, sizes, subsizes, starts",
    );
    t.eq(contents.integers.len(), 11, "subarray: and the order");
    let spaced = t.okay(DerivedType::resized(mpi, &vector, -8, 200), "resized");
    let contents = t.okay(spaced.contents(), "resized's contents");
    t.eq(
        contents.addresses.clone(),
        vec![-8, 200],
        "resized: lb, extent",
    );
    match &contents.datatypes[..] {
        [ContentType::Derived(inner)] => {
            t.eq_ok(
                inner.envelope().map(|e| e.combiner),
                Combiner::Vector,
                "the resized vector",
            );
            t.eq(
                inner.bounds(),
                vector.bounds(),
                "a decoded type has the original's bounds",
            );
        }
        other => t.ok(false, format!("resized of a derived type: {other:?}")),
    }
    let copy = t.okay(vector.dup(), "dup");
    t.eq_ok(
        copy.envelope().map(|e| e.combiner),
        Combiner::Dup,
        "dup's combiner",
    );
    let mixed = t.okay(
        DerivedType::create_struct(mpi, &[1, 2], &[16, 0], &[f.into(), i32::datatype().into()]),
        "create_struct",
    );
    let contents = t.okay(mixed.contents(), "struct's contents");
    t.eq(
        contents.integers.clone(),
        vec![2, 1, 2],
        "struct: count, block lengths",
    );
    t.eq(
        contents.addresses.clone(),
        vec![16, 0],
        "struct: displacements",
    );
    // A derived struct's datatype: resized to its size, over a struct of its three fields.
    let envelope = TypeRef::from(Padded::datatype()).envelope();
    t.eq_ok(
        envelope.map(|e| e.combiner),
        Combiner::Resized,
        "a derived struct is resized",
    );
    let contents = t.okay(
        TypeRef::from(Padded::datatype()).contents(mpi),
        "its contents",
    );
    t.eq(
        contents.addresses.clone(),
        vec![0, std::mem::size_of::<Padded>() as isize],
        "resized to the struct's size",
    );
    if let [ContentType::Derived(fields)] = &contents.datatypes[..] {
        let inner = t.okay(fields.contents(), "the fields' struct");
        t.eq(
            inner.integers.clone(),
            vec![3, 1, 1, 1],
            "three fields of one element each",
        );
        let offsets = [
            std::mem::offset_of!(Padded, tag),
            std::mem::offset_of!(Padded, value),
            std::mem::offset_of!(Padded, id),
        ];
        t.eq(
            inner.addresses.clone(),
            offsets.iter().map(|&o| o as isize).collect::<Vec<_>>(),
            "at the fields' real offsets",
        );
    } else {
        t.ok(false, "a derived struct's datatype decodes to a struct");
    }
}

fn refusals(mpi: &Mpi, world: &ferrompi::Communicator<'_>, t: &mut Checks) {
    // A count beyond `int`: MPI-4's large-count constructor where the MPI has it (no memory
    // is needed to describe 2 GiB), a count overflow elsewhere.
    let huge = DerivedType::contiguous(mpi, 1usize << 31, u8::datatype());
    if ferrompi::LARGE_COUNT_CALLS {
        let extent = huge.map(|h| h.bounds().extent);
        t.eq_ok(
            extent,
            1i64 << 31,
            "a 2 GiB contiguous type through MPI_Type_contiguous_c",
        );
    } else {
        t.ok(
            matches!(huge, Err(Error::CountOverflow { .. })),
            "a count beyond int without large-count constructors",
        );
    }
    let me = world.rank();
    let invalid = |r: &Result<(), Error>| matches!(r, Err(Error::InvalidArgument { .. }));
    let column = t.okay(DerivedType::vector(mpi, 3, 1, 4, f64::datatype()), "column");
    let matrix = [0.0f64; 12];
    let mut room = [0.0f64; 12];
    t.ok(
        invalid(&column.view(&matrix[..8], 1).map(drop)),
        "a view past the slice's end",
    );
    t.ok(
        invalid(&column.view(&matrix, 2).map(drop)),
        "a count that reaches past the slice",
    );
    t.ok(
        invalid(&column.view_mut(&mut room[4..], 1).map(drop)),
        "a view_mut past the end",
    );
    let before = t.okay(
        DerivedType::create_struct(mpi, &[1], &[-8], &[f64::datatype().into()]),
        "a type before its start",
    );
    t.ok(
        invalid(&before.view(&matrix, 1).map(drop)),
        "a negative lower bound before the slice",
    );
    t.ok(
        invalid(&before.view(&matrix[1..], 1).map(drop)),
        "a view is relative to its slice: never before its start",
    );
    let backwards = t.okay(
        DerivedType::resized(mpi, f64::datatype(), 0, -8),
        "a negative extent",
    );
    t.ok(
        invalid(&backwards.view(&matrix, 2).map(drop)),
        "copies that run backwards before the slice",
    );
    t.ok(
        invalid(
            &DerivedType::subarray(mpi, &[3, 4], &[2, 2], &[2, 1], Order::C, f64::datatype())
                .map(drop),
        ),
        "a subarray outside its array",
    );
    t.ok(
        invalid(&DerivedType::indexed(mpi, &[1, 2], &[0], f64::datatype()).map(drop)),
        "indexed: lengths differ",
    );
    t.ok(
        invalid(
            &DerivedType::darray(
                mpi,
                3,
                0,
                &[8],
                &[Distribution::None],
                &[2],
                Order::C,
                f64::datatype(),
            )
            .map(drop),
        ),
        "darray: grid is not size",
    );
    let values = [1.0f64; 4];
    let mut small = [0u8; 16];
    let mut at = 0;
    t.ok(
        invalid(&world.pack(&values[..], &mut small, &mut at)),
        "pack into too little room",
    );
    t.eq(at, 0, "a refused pack moves nothing");
    let mut at = 40;
    let mut out = [0.0f64; 1];
    t.ok(
        invalid(&world.unpack(&small, &mut at, &mut out[..])),
        "unpack from past the end",
    );
    let mut at = 0;
    t.ok(
        invalid(&pack_external(&values[..], &mut small, &mut at)),
        "pack_external into too little room",
    );
    // A receive view smaller than the message: MPI truncates, writes nothing outside.
    let mut wide = [-1.0f64; 12];
    let result = ferrompi::scope(|s| {
        let sending = world.isend(s, &[1.0f64; 4], me, 30)?;
        let got = world.recv_view(column.view_mut(&mut wide, 1)?, me, 30);
        let _ = sending.wait();
        got.map(drop)
    });
    t.ok(
        result.is_err(),
        "a message larger than the view is an error",
    );
    t.ok(
        wide.iter()
            .enumerate()
            .all(|(i, &v)| i % 4 == 0 || v == -1.0),
        "a truncated receive wrote only the view's elements",
    );
}
