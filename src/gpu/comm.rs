//! Point-to-point and collectives on device memory: straight to a CUDA-aware MPI, or staged
//! through pinned host memory.

use super::cuda::{Cuda, DeviceMemory, DeviceMemoryMut, PinnedHost, bytes_of};
use crate::comm::Communicator;
use crate::comm::call::MoveFn;
use crate::comm::collective::{reduction, same_len, same_product};
use crate::comm::p2p::{Destination, Source, TagMatch};
use crate::comm::partition::Partition;
use crate::datatype::{Equivalence, count_of};
use crate::env::enter;
use crate::error::{ErrorKind, Result, check};
use crate::ffi;
use crate::op::Predefined;
use crate::status::Status;
use std::ffi::{c_int, c_void};

/// How a [`DeviceComm`] moves device memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Transfer {
    /// Straight to the MPI when [`Mpi::gpu_support`](crate::Mpi::gpu_support) says it takes
    /// CUDA memory (or the device is [`Cuda::emulated`]), staged otherwise.
    #[default]
    Auto,
    /// Device pointers straight to the MPI; [`ErrorKind::Unsupported`] when making the
    /// `DeviceComm` if the MPI does not say it takes them (passing them anyway would crash it).
    Direct,
    /// Always through pinned host memory: one copy from the device before the MPI call and one
    /// back after it, on the calling thread.
    Staged,
}

/// A communicator with a [`Cuda`] device: point-to-point and the main collectives on
/// [`DeviceMemory`] (`send`, `recv`, `bcast`, `allreduce`, `allgather`, `allgatherv`,
/// `alltoall`, `alltoallv`, `reduce_scatter_block`), with the same arguments, checks and errors
/// as the host calls of [`Communicator`]. Made by [`Communicator::with_device`].
///
/// Staged calls copy through one pinned buffer that the `DeviceComm` keeps and grows to the
/// largest call (hence `&mut self`): after the first call of a size, no allocation. On an
/// error, the device buffers written by the call are left as they were.
///
/// Reductions take the predefined ops ([`Predefined`]): MPI applies them to device memory
/// itself. A user-defined op would run on the host, so it needs host buffers.
///
/// Every call refuses, with [`ErrorKind::InvalidArgument`] before any copy or communication, a
/// [`DeviceVec`](super::DeviceVec) that another [`Cuda`] allocated (a GPU's buffer given to an
/// emulated device would be copied on the host).
///
/// ```
/// use ferrompi::gpu::{Cuda, Transfer};
/// use ferrompi::op::Sum;
/// # let mpi = ferrompi::Mpi::init()?;
/// # let world = mpi.world();
/// let cuda = Cuda::emulated(); // Cuda::load(0)? on a GPU
/// let mut on_gpu = world.with_device(&cuda, Transfer::Auto)?;
/// let mut gradients = cuda.upload(&[1.0f32; 4])?;
/// on_gpu.allreduce_in_place(&mut gradients, Sum)?;
/// assert_eq!(gradients.to_vec()?, [world.size() as f32; 4]);
/// # Ok::<(), ferrompi::Error>(())
/// ```
pub struct DeviceComm<'c, 'env> {
    comm: &'c Communicator<'env>,
    cuda: &'c Cuda,
    direct: bool,
    staging: Option<PinnedHost<'c>>,
}

/// Alignment of the second staging region: any `Equivalence` type's.
const REGION_ALIGN: usize = 256;

impl<'env> Communicator<'env> {
    /// This communicator with device `cuda`, moving device memory as `transfer` says.
    ///
    /// # Errors
    /// [`ErrorKind::Unsupported`] for [`Transfer::Direct`] when the MPI does not take CUDA memory;
    /// as [`Mpi::gpu_support`](crate::Mpi::gpu_support) for the other modes but `Staged`.
    pub fn with_device<'c>(
        &'c self,
        cuda: &'c Cuda,
        transfer: Transfer,
    ) -> Result<DeviceComm<'c, 'env>> {
        let direct = match transfer {
            Transfer::Staged => false,
            Transfer::Auto | Transfer::Direct if cuda.is_emulated() => true,
            Transfer::Auto => super::support()?.cuda,
            Transfer::Direct => {
                let support = super::support()?;
                if !support.cuda {
                    return Err(ErrorKind::Unsupported {
                        operation: "with_device",
                        reason: format!(
                            "the MPI does not take CUDA memory ({}); use Transfer::Staged",
                            support.how
                        ),
                    }
                    .into());
                }
                true
            }
        };
        Ok(DeviceComm {
            comm: self,
            cuda,
            direct,
            staging: None,
        })
    }
}

/// Two disjoint regions of the staging buffer, `a` then `b` values of `T`, growing it first.
fn regions<'s, 'c, T: Equivalence>(
    staging: &'s mut Option<PinnedHost<'c>>,
    cuda: &'c Cuda,
    a: usize,
    b: usize,
    operation: &'static str,
) -> Result<(&'s mut [T], &'s mut [T])> {
    const { assert!(align_of::<T>() <= REGION_ALIGN && !T::NEEDS_REPAIR) };
    let a_bytes = bytes_of::<T>(a, operation)?;
    let b_at = a_bytes.next_multiple_of(REGION_ALIGN);
    let total = bytes_of::<T>(b, operation)?
        .checked_add(b_at)
        .ok_or_else(|| ErrorKind::Device {
            operation,
            reason: "staging buffer size overflows".into(),
        })?;
    let have = staging.as_ref().map_or(0, |s| s.bytes);
    if have < total {
        *staging = None;
        *staging = Some(PinnedHost::new(
            cuda,
            total.max(have.saturating_mul(2)),
            operation,
        )?);
    }
    let base = staging.as_mut().expect("grown above").ptr;
    // SAFETY: the buffer holds `total` bytes, aligned to 256 (`PinnedHost`), so both regions
    // are in it, aligned for `T` and disjoint; it was zeroed when allocated and has held only
    // values of `Equivalence` types without repair since, so its bytes are valid `T`s. The
    // slices borrow `staging` mutably: no other staging call can overlap them.
    unsafe {
        Ok((
            std::slice::from_raw_parts_mut(base.cast::<T>(), a),
            std::slice::from_raw_parts_mut(base.add(b_at).cast::<T>(), b),
        ))
    }
}

/// Copies device memory `from` into the host slice `to` (of the same length).
fn download<D: DeviceMemory>(cuda: &Cuda, from: &D, to: &mut [D::Item]) -> Result<()> {
    debug_assert_eq!(from.len(), to.len());
    // SAFETY: `to` is writable for the bytes of `from.len()` values; `from` is device memory of
    // that size by its trait's contract, borrowed for the copy; any bytes are a valid `Item`
    // (the staging regions take only types without repair).
    unsafe { cuda.dtoh(to.as_mut_ptr().cast(), from.device_ptr(), size_of_val(to)) }
}

/// Copies the host slice `from` into the first `from.len()` values of device memory `to`.
fn upload<D: DeviceMemoryMut>(cuda: &Cuda, from: &[D::Item], to: &mut D) -> Result<()> {
    assert!(
        from.len() <= to.len(),
        "staging: an upload past the device buffer"
    );
    // SAFETY: as `download`, the other way; `to` is borrowed mutably.
    unsafe { cuda.htod(to.device_ptr(), from.as_ptr().cast(), size_of_val(from)) }
}

/// A device pointer as MPI's buffer argument.
fn ptr<D: DeviceMemory>(buf: &D) -> *mut c_void {
    buf.device_ptr() as usize as *mut c_void
}

impl<'c, 'env> DeviceComm<'c, 'env> {
    /// Whether device pointers go straight to the MPI (else they are staged).
    pub fn is_direct(&self) -> bool {
        self.direct
    }

    /// The communicator.
    pub fn comm(&self) -> &'c Communicator<'env> {
        self.comm
    }

    /// Refuses a buffer that another [`Cuda`] allocated: its memory may be of another kind
    /// (a GPU's given to an emulated device, which would copy it on the host, or the other way
    /// round), so it is not this device's to copy or to pass to the MPI.
    fn own<D: DeviceMemory>(&self, buf: &D, operation: &'static str) -> Result<()> {
        match buf.allocated_by() {
            Some(cuda) if !std::ptr::eq(cuda, self.cuda) => Err(ErrorKind::InvalidArgument {
                operation,
                reason: "a device buffer of another Cuda than this DeviceComm's".into(),
            }
            .into()),
            _ => Ok(()),
        }
    }

    /// Runs one direct MPI call behind the thread gate.
    fn call(
        &self,
        operation: &'static str,
        call: impl FnOnce(ffi::MPI_Comm) -> c_int,
    ) -> Result<()> {
        let rc = {
            let _gate = enter(operation)?;
            call(self.comm.as_raw())
        };
        check(rc, operation)
    }

    /// Sends `buf` to `dest` (`MPI_Send`, MPI-4.0 §3.2.1), as [`Communicator::send`].
    ///
    /// # Errors
    /// As [`Communicator::send`]; [`ErrorKind::CountOverflow`] above `i32::MAX` elements when
    /// direct; [`ErrorKind::Device`] for a failed copy.
    pub fn send<D: DeviceMemory>(
        &mut self,
        buf: &D,
        dest: impl Into<Destination>,
        tag: i32,
    ) -> Result<()> {
        const OP: &str = "send";
        self.own(buf, OP)?;
        if self.direct {
            let args = self.comm.send_args::<D::Item>(buf.len(), dest, tag, OP)?;
            let dt = D::Item::datatype().as_raw();
            // SAFETY: `buf` holds `args.count` elements of `dt` in memory the MPI reads
            // (device memory it takes, or emulated host memory), borrowed for the call.
            return self.call(OP, |c| unsafe {
                ffi::MPI_Send(ptr(buf), args.count, dt, args.dest, args.tag, c)
            });
        }
        let (host, _) = regions::<D::Item>(&mut self.staging, self.cuda, buf.len(), 0, OP)?;
        download(self.cuda, buf, host)?;
        self.comm.send(host, dest, tag)
    }

    /// Receives into `buf` (`MPI_Recv`, MPI-4.0 §3.2.4), as [`Communicator::recv`].
    ///
    /// # Errors
    /// As [`send`](DeviceComm::send).
    pub fn recv<D: DeviceMemoryMut>(
        &mut self,
        buf: &mut D,
        source: impl Into<Source>,
        tag: impl Into<TagMatch>,
    ) -> Result<Status> {
        const OP: &str = "recv";
        self.own(buf, OP)?;
        if self.direct {
            let args = self.comm.recv_args::<D::Item>(buf.len(), source, tag, OP)?;
            let dt = D::Item::datatype().as_raw();
            let mut status = Status::empty();
            let s = status.as_raw_mut() as *mut ffi::MPI_Status;
            // SAFETY: `buf` has room for `args.count` elements of `dt`, borrowed mutably.
            self.call(OP, |c| unsafe {
                ffi::MPI_Recv(ptr(buf), args.count, dt, args.source, args.tag, c, s)
            })?;
            return Ok(status);
        }
        let (host, _) = regions::<D::Item>(&mut self.staging, self.cuda, buf.len(), 0, OP)?;
        let status = self.comm.recv(host, source, tag)?;
        // Only what arrived: the rest of `buf` stays as it was, as with a host receive (and
        // all of it, from PROC_NULL).
        let arrived = status.count::<D::Item>()?.min(host.len());
        upload(self.cuda, &host[..arrived], buf)?;
        Ok(status)
    }

    /// Broadcasts `buf` from `root` (`MPI_Bcast`, MPI-4.0 §6.4), as [`Communicator::bcast`].
    ///
    /// # Errors
    /// As [`send`](DeviceComm::send), and [`Communicator::bcast`].
    pub fn bcast<D: DeviceMemoryMut>(&mut self, buf: &mut D, root: i32) -> Result<()> {
        const OP: &str = "bcast";
        self.own(buf, OP)?;
        if self.direct {
            self.comm.check_rank(root, "root", OP)?;
            let count = count_of::<D::Item>(buf.len(), OP)?;
            let dt = D::Item::datatype().as_raw();
            // SAFETY: `buf` holds `count` elements, borrowed mutably for the call.
            return self.call(OP, |c| unsafe {
                ffi::MPI_Bcast(ptr(buf), count, dt, root, c)
            });
        }
        let (host, _) = regions::<D::Item>(&mut self.staging, self.cuda, buf.len(), 0, OP)?;
        let root_here = self.comm.rank() == root;
        if root_here {
            download(self.cuda, buf, host)?;
        }
        self.comm.bcast(host, root)?;
        if !root_here {
            upload(self.cuda, host, buf)?;
        }
        Ok(())
    }

    /// Combines `send` of every process with `op` into every process's `recv`
    /// (`MPI_Allreduce`, MPI-4.0 §6.9.6), as [`Communicator::allreduce`].
    ///
    /// # Errors
    /// As [`send`](DeviceComm::send), and [`Communicator::allreduce`].
    pub fn allreduce<S, R, O>(&mut self, send: &S, recv: &mut R, op: O) -> Result<()>
    where
        S: DeviceMemory,
        R: DeviceMemoryMut<Item = S::Item>,
        O: Predefined<S::Item>,
    {
        self.reduce(ffi::MPI_Allreduce, "allreduce", send, recv, 1, op)
    }

    /// Each process gets its block of the reduction of `send` (one block of `recv.len()`
    /// values per rank) (`MPI_Reduce_scatter_block`, MPI-4.0 §6.10.1), as
    /// [`Communicator::reduce_scatter_block`].
    ///
    /// # Errors
    /// As [`allreduce`](DeviceComm::allreduce); [`ErrorKind::BufferSize`] unless `send.len() ==
    /// recv.len() * size`.
    pub fn reduce_scatter_block<S, R, O>(&mut self, send: &S, recv: &mut R, op: O) -> Result<()>
    where
        S: DeviceMemory,
        R: DeviceMemoryMut<Item = S::Item>,
        O: Predefined<S::Item>,
    {
        let ranks = self.comm.size() as usize;
        self.reduce(
            ffi::MPI_Reduce_scatter_block,
            "reduce_scatter_block",
            send,
            recv,
            ranks,
            op,
        )
    }

    /// The reductions whose send buffer holds `factor` times the receive buffer's values.
    fn reduce<S, R, O>(
        &mut self,
        mpi: unsafe extern "C" fn(
            *const c_void,
            *mut c_void,
            c_int,
            ffi::MPI_Datatype,
            ffi::MPI_Op,
            ffi::MPI_Comm,
        ) -> c_int,
        operation: &'static str,
        send: &S,
        recv: &mut R,
        factor: usize,
        op: O,
    ) -> Result<()>
    where
        S: DeviceMemory,
        R: DeviceMemoryMut<Item = S::Item>,
        O: Predefined<S::Item>,
    {
        self.own(send, operation)?;
        self.own(recv, operation)?;
        same_product(recv.len(), factor, send.len(), operation)?;
        if self.direct {
            let (count, operand) = reduction(recv.len(), op.operand(), operation)?;
            let count = int(count, operation)?;
            let (s, d) = (ptr(send), ptr(recv));
            // SAFETY: `send` holds `factor * count` elements and `recv` `count` (checked above),
            // both borrowed for the call; a predefined op, which the MPI applies itself.
            return self.call(operation, |c| unsafe {
                mpi(s, d, count, operand.datatype, operand.op, c)
            });
        }
        let (s, r) = regions::<S::Item>(
            &mut self.staging,
            self.cuda,
            send.len(),
            recv.len(),
            operation,
        )?;
        download(self.cuda, send, s)?;
        if factor == 1 {
            self.comm.allreduce(s, r, op)?;
        } else {
            self.comm.reduce_scatter_block(s, r, op)?;
        }
        upload(self.cuda, r, recv)
    }

    /// [`allreduce`](DeviceComm::allreduce) with `MPI_IN_PLACE`: `buf` is input and result.
    ///
    /// # Errors
    /// As [`allreduce`](DeviceComm::allreduce).
    pub fn allreduce_in_place<D, O>(&mut self, buf: &mut D, op: O) -> Result<()>
    where
        D: DeviceMemoryMut,
        O: Predefined<D::Item>,
    {
        const OP: &str = "allreduce";
        self.own(buf, OP)?;
        if self.direct {
            let (count, operand) = reduction(buf.len(), op.operand(), OP)?;
            let count = int(count, OP)?;
            let d = ptr(buf);
            // SAFETY: `buf` holds `count` elements, borrowed mutably; `MPI_IN_PLACE` as send.
            return self.call(OP, |c| unsafe {
                ffi::MPI_Allreduce(ffi::MPI_IN_PLACE, d, count, operand.datatype, operand.op, c)
            });
        }
        let (host, _) = regions::<D::Item>(&mut self.staging, self.cuda, buf.len(), 0, OP)?;
        download(self.cuda, buf, host)?;
        self.comm.allreduce_in_place(host, op)?;
        upload(self.cuda, host, buf)
    }

    /// Every process gets every process's `send`, in rank order (`MPI_Allgather`, MPI-4.0
    /// §6.7), as [`Communicator::allgather`].
    ///
    /// # Errors
    /// As [`send`](DeviceComm::send); [`ErrorKind::BufferSize`] unless `recv.len() == send.len() *
    /// size`.
    pub fn allgather<S, R>(&mut self, send: &S, recv: &mut R) -> Result<()>
    where
        S: DeviceMemory,
        R: DeviceMemoryMut<Item = S::Item>,
    {
        self.move_all(MoveFn::Allgather, send, recv)
    }

    /// Block `i` of every process's `send` goes to rank `i` (`MPI_Alltoall`, MPI-4.0 §6.8), as
    /// [`Communicator::alltoall`].
    ///
    /// # Errors
    /// As [`send`](DeviceComm::send); [`ErrorKind::BufferSize`] unless both buffers hold the same
    /// number of values, a multiple of the size.
    pub fn alltoall<S, R>(&mut self, send: &S, recv: &mut R) -> Result<()>
    where
        S: DeviceMemory,
        R: DeviceMemoryMut<Item = S::Item>,
    {
        self.move_all(MoveFn::Alltoall, send, recv)
    }

    fn move_all<S, R>(&mut self, f: MoveFn, send: &S, recv: &mut R) -> Result<()>
    where
        S: DeviceMemory,
        R: DeviceMemoryMut<Item = S::Item>,
    {
        let operation = f.name(false);
        self.own(send, operation)?;
        self.own(recv, operation)?;
        // The host calls' checks: allgather sends all of `send` to each rank, alltoall one
        // block of it; counts per rank.
        let (sn, dn) = self
            .comm
            .move_args::<S::Item>(f, send.len(), recv.len(), 0, operation)?;
        if self.direct {
            let (sn, dn) = (int(sn, operation)?, int(dn, operation)?);
            let dt = S::Item::datatype().as_raw();
            let (s, d) = (ptr(send), ptr(recv));
            let mpi = match f {
                MoveFn::Alltoall => ffi::MPI_Alltoall,
                _ => ffi::MPI_Allgather,
            };
            // SAFETY: `send` holds what each rank's block reads, `recv` `size` blocks of `dn`
            // (checked above); both borrowed for the call.
            return self.call(operation, |c| unsafe { mpi(s, sn, dt, d, dn, dt, c) });
        }
        let (s, r) = regions::<S::Item>(
            &mut self.staging,
            self.cuda,
            send.len(),
            recv.len(),
            operation,
        )?;
        download(self.cuda, send, s)?;
        match f {
            MoveFn::Alltoall => self.comm.alltoall(s, r)?,
            _ => self.comm.allgather(s, r)?,
        }
        upload(self.cuda, r, recv)
    }

    /// Every process gets every process's block, placed as `blocks` says (`MPI_Allgatherv`,
    /// MPI-4.0 §6.7), as [`Communicator::allgatherv`].
    ///
    /// # Errors
    /// As [`Communicator::allgatherv`]; when direct, [`ErrorKind::CountOverflow`] for a partition
    /// over `i32::MAX` elements (staged, the host call's large-count path takes it).
    pub fn allgatherv<S, R>(
        &mut self,
        send: &S,
        recv: &mut R,
        blocks: &Partition<S::Item>,
    ) -> Result<()>
    where
        S: DeviceMemory,
        R: DeviceMemoryMut<Item = S::Item>,
    {
        const OP: &str = "allgatherv";
        self.own(send, OP)?;
        self.own(recv, OP)?;
        if self.direct {
            blocks.check(self.comm.size(), recv.len(), OP)?;
            let own = blocks.len_of(self.comm.rank() as usize);
            same_len(own, send.len(), OP)?;
            let sn = count_of::<S::Item>(own, OP)?;
            small(blocks, blocks.extent(), OP)?;
            let dt = S::Item::datatype().as_raw();
            let (s, d) = (ptr(send), ptr(recv));
            // SAFETY: this rank's block fits `send`, the partition fits `recv` (checked above),
            // its counts and displacements are `int`s; both buffers borrowed for the call.
            return self.call(OP, |c| unsafe {
                ffi::MPI_Allgatherv(s, sn, dt, d, blocks.counts(), blocks.displs(), dt, c)
            });
        }
        let (s, r) = regions::<S::Item>(&mut self.staging, self.cuda, send.len(), recv.len(), OP)?;
        download(self.cuda, send, s)?;
        keep_gaps(self.cuda, blocks, recv, r)?;
        self.comm.allgatherv(s, r, blocks)?;
        upload(self.cuda, r, recv)
    }

    /// Block `i` of `send` (as `send_blocks` places it) goes to rank `i`, and rank `i`'s block
    /// for this process lands where `recv_blocks` says (`MPI_Alltoallv`, MPI-4.0 §6.8), as
    /// [`Communicator::alltoallv`].
    ///
    /// # Errors
    /// As [`allgatherv`](DeviceComm::allgatherv).
    pub fn alltoallv<S, R>(
        &mut self,
        send: &S,
        send_blocks: &Partition<S::Item>,
        recv: &mut R,
        recv_blocks: &Partition<S::Item>,
    ) -> Result<()>
    where
        S: DeviceMemory,
        R: DeviceMemoryMut<Item = S::Item>,
    {
        const OP: &str = "alltoallv";
        self.own(send, OP)?;
        self.own(recv, OP)?;
        if self.direct {
            send_blocks.check_send(self.comm.size(), send.len(), OP)?;
            recv_blocks.check(self.comm.size(), recv.len(), OP)?;
            small(send_blocks, send_blocks.extent(), OP)?;
            small(recv_blocks, recv_blocks.extent(), OP)?;
            let dt = S::Item::datatype().as_raw();
            let (s, d) = (ptr(send), ptr(recv));
            // SAFETY: both partitions fit their buffers, with `int` counts and displacements
            // (checked above); both buffers borrowed for the call.
            return self.call(OP, |c| unsafe {
                ffi::MPI_Alltoallv(
                    s,
                    send_blocks.counts(),
                    send_blocks.displs(),
                    dt,
                    d,
                    recv_blocks.counts(),
                    recv_blocks.displs(),
                    dt,
                    c,
                )
            });
        }
        let (s, r) = regions::<S::Item>(&mut self.staging, self.cuda, send.len(), recv.len(), OP)?;
        download(self.cuda, send, s)?;
        keep_gaps(self.cuda, recv_blocks, recv, r)?;
        self.comm.alltoallv(s, send_blocks, r, recv_blocks)?;
        upload(self.cuda, r, recv)
    }
}

/// Where `blocks` leave values of `recv` unwritten (gaps, or a buffer longer than their
/// extent), starts the staging region `r` from `recv`'s values, so that the upload after the
/// call gives those back unchanged, as a host call leaves them.
fn keep_gaps<R: DeviceMemoryMut>(
    cuda: &Cuda,
    blocks: &Partition<R::Item>,
    recv: &R,
    r: &mut [R::Item],
) -> Result<()> {
    if blocks.is_packed() && blocks.extent() == recv.len() {
        return Ok(());
    }
    download(cuda, recv, r)
}

/// A count the direct path passes as MPI's `int`. The crate's large-count paths are not used
/// there: some of them copy between buffers on the host, which device memory would not allow.
fn int(count: ffi::MPI_Count, operation: &'static str) -> Result<c_int> {
    c_int::try_from(count).map_err(|_| {
        ErrorKind::CountOverflow {
            operation,
            count: u64::try_from(count).unwrap_or(u64::MAX),
            max: i64::from(c_int::MAX),
        }
        .into()
    })
}

/// A partition whose counts and displacements are `int`s, as the direct path passes them.
fn small<T: Equivalence>(
    blocks: &Partition<T>,
    extent: usize,
    operation: &'static str,
) -> Result<()> {
    if blocks.is_large() {
        return Err(ErrorKind::CountOverflow {
            operation,
            count: (extent as u64).saturating_mul(T::ELEMENTS as u64),
            max: i64::from(i32::MAX),
        }
        .into());
    }
    Ok(())
}
