//! The exchange two benchmarks share: 8 receives and 8 sends of 8 bytes to this same process
//! and a wait for all, through `scope` + `RequestSet` and through `ffi` on one array of
//! handles. `benches/request_cost.rs` times it; `benches/instruction_cost.rs` counts its
//! instructions. Both are inlined into their callers, so each measures the loop as written
//! there.

use ferrompi::{Communicator, Equivalence, RequestSet, RequestStorage, ffi, scope};

/// Requests per exchange.
pub const REQUESTS: usize = 16;

/// The buffers and handles of the exchange; `into` gets the ones `out` carries, 8 bytes per
/// receive.
pub struct Exchange {
    pub out: [u8; 8],
    pub into: [u8; 64],
    storage: RequestStorage,
    handles: [ffi::MPI_Request; REQUESTS],
}

impl Default for Exchange {
    fn default() -> Self {
        Exchange {
            out: [1; 8],
            into: [0; 64],
            storage: RequestStorage::with_capacity(REQUESTS),
            handles: [ffi::MPI_REQUEST_NULL; REQUESTS],
        }
    }
}

impl Exchange {
    /// One exchange through ferrompi, each request pushed into the set.
    #[inline(always)]
    pub fn ferrompi(&mut self, world: &Communicator<'_>) {
        self.through_set::<false>(world);
    }

    /// The same exchange through ferrompi, each request started straight into the set
    /// (`irecv_into`, `isend_into`).
    #[inline(always)]
    pub fn ferrompi_into(&mut self, world: &Communicator<'_>) {
        self.through_set::<true>(world);
    }

    /// The exchange through a `RequestSet`, its requests started into it (`INTO`) or pushed.
    #[inline(always)]
    fn through_set<const INTO: bool>(&mut self, world: &Communicator<'_>) {
        let me = world.rank();
        let (out, into) = (&self.out, &mut self.into);
        let storage = &mut self.storage;
        scope(|s| -> ferrompi::Result<()> {
            let mut set = RequestSet::with_storage(s, storage);
            for (k, chunk) in into.chunks_exact_mut(8).enumerate() {
                if INTO {
                    world.irecv_into(&mut set, s, chunk, me, k as i32)?;
                } else {
                    set.push(world.irecv(s, chunk, me, k as i32)?);
                }
            }
            for k in 0..8 {
                if INTO {
                    world.isend_into(&mut set, s, out, me, k)?;
                } else {
                    set.push(world.isend(s, out, me, k)?);
                }
            }
            set.wait_all()
        })
        .expect("exchange");
    }

    /// The same exchange through `ffi`.
    #[inline(always)]
    pub fn ffi(&mut self, world: &Communicator<'_>) {
        let (me, comm, byte) = (world.rank(), world.as_raw(), u8::datatype().as_raw());
        let (recv, handles) = (self.into.as_mut_ptr(), self.handles.as_mut_ptr());
        // SAFETY: 8 bytes of `into` per receive and one handle slot per operation, all alive
        // until the wait for all of them below; `out` is only read.
        unsafe {
            for k in 0..8 {
                let to = recv.add(8 * k).cast();
                ffi::MPI_Irecv(to, 8, byte, me, k as i32, comm, handles.add(k));
            }
            for k in 0..8 {
                let from = self.out.as_ptr().cast();
                ffi::MPI_Isend(from, 8, byte, me, k as i32, comm, handles.add(8 + k));
            }
            ffi::MPI_Waitall(16, handles, ffi::MPI_STATUSES_IGNORE);
        }
        std::hint::black_box(&mut self.handles);
    }

    /// Checks that every receive got its message, then clears the buffer for the next path.
    pub fn delivered(&mut self, path: &str) {
        assert_eq!(
            self.into, [1u8; 64],
            "{path}: the receives got what was sent"
        );
        self.into.fill(0);
    }
}
