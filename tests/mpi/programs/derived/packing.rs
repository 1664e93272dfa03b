//! Packing (`external32` too), decoding a type's envelope and contents, and bad layouts
//! refused before MPI runs.

use super::{Padded, Stats, canaried, canaries_hold, padded};
use crate::checks::Checks;
use ferrompi::ErrorKind;
use ferrompi::datatype::pack::{pack_external, pack_external_size, unpack_external};
use ferrompi::{DerivedType, Distribution, Equivalence, Error, Mpi, Order};

pub(super) fn packing(mpi: &Mpi, world: &ferrompi::Communicator<'_>, t: &mut Checks) {
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
            matches!(
                pack_external_size(&one[..])
                    .as_ref()
                    .map_err(ferrompi::Error::kind),
                Err(ErrorKind::Unsupported { .. })
            ),
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
pub(super) fn decoding(mpi: &Mpi, t: &mut Checks) {
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

pub(super) fn refusals(mpi: &Mpi, world: &ferrompi::Communicator<'_>, t: &mut Checks) {
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
            matches!(
                huge.as_ref().map_err(ferrompi::Error::kind),
                Err(ErrorKind::CountOverflow { .. })
            ),
            "a count beyond int without large-count constructors",
        );
    }
    let me = world.rank();
    let invalid = |r: &Result<(), Error>| {
        matches!(
            r.as_ref().map_err(ferrompi::Error::kind),
            Err(ErrorKind::InvalidArgument { .. })
        )
    };
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
