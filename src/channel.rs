//! Point-to-point channels: a private link between this rank and one peer.
//!
//! [`Communicator::channel`] creates a two-process communicator of just this rank and the peer
//! (`MPI_Comm_create_group`, so only the two take part), which gives the channel its own message
//! context: its traffic never matches the user's other messages, whatever their tags. Both ends
//! must open the channel with the same `tag`; a rank opening several channels must open them in
//! an order its peers agree on, as with any blocking collective.

use crate::comm::{Communicator, p2p};
use crate::datatype::Equivalence;
#[cfg(doc)]
use crate::error::ErrorKind;
use crate::error::Result;
use crate::request::{OwnedBuffer, OwnedRequest};

/// A link between this rank and one peer; see the [module docs](self).
///
/// `Send + Sync` like its communicator; blocking and nonblocking (`.await`-able) forms.
#[derive(Debug)]
pub struct Channel<'env> {
    comm: Communicator<'env>,
    peer: i32,
    tag: i32,
}

/// Channels: a private link to one peer.
///
/// ```
/// # let mpi = ferrompi::Mpi::init()?;
/// let world = mpi.world();
/// let me = world.rank();
/// let link = world.channel(me, 0)?; // a channel to ourselves, on a communicator of its own
/// let pending = link.irecv(vec![0u32; 2])?;
/// link.send_slice(&[6u32, 7])?;
/// let (numbers, status) = pending.wait();
/// status?;
/// assert_eq!(numbers, [6, 7]);
/// # Ok::<(), ferrompi::Error>(())
/// ```
impl<'env> Communicator<'env> {
    /// Opens a channel to `peer` (a rank of this communicator). Both ranks call it with each
    /// other's rank and the same `tag`; it blocks until both have.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let me = world.rank();
    /// // Both ends call it, naming each other; here both ends are this rank.
    /// let link = world.channel(me, 0)?;
    /// assert_eq!(link.communicator().size(), 1); // the pair's own communicator
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::InvalidRank`],
    /// [`ErrorKind::InvalidTag`] before any communication;
    /// [`ErrorKind::WrongThread`]; [`ErrorKind::Mpi`].
    pub fn channel(&self, peer: i32, tag: i32) -> Result<Channel<'env>> {
        const OP: &str = "channel";
        self.check_rank(peer, "peer", OP)?;
        p2p::check_tag(tag, OP)?;
        let me = self.rank();
        let pair = if peer == me {
            vec![me]
        } else {
            vec![me.min(peer), me.max(peer)]
        };
        let group = self.group()?.incl(&pair)?;
        let comm = self.create_from_group(&group, tag)?;
        let peer = i32::from(peer != me && me < peer);
        Ok(Channel { comm, peer, tag })
    }
}

impl<'env> Channel<'env> {
    /// The channel's private communicator (this rank and the peer).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let link = world.channel(world.rank(), 0)?;
    /// let _private: &ferrompi::Communicator<'_> = link.communicator();
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    pub fn communicator(&self) -> &Communicator<'env> {
        &self.comm
    }

    /// Sends bytes to the peer.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let link = world.channel(world.rank(), 0)?;
    /// let pending = link.irecv(vec![0u8; 3])?;
    /// link.send(b"abc")?;
    /// assert_eq!(pending.wait().0, b"abc");
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Communicator::send`].
    pub fn send(&self, bytes: &[u8]) -> Result<()> {
        self.comm.send(bytes, self.peer, self.tag)
    }

    /// Receives bytes from the peer into `buf`; returns how many arrived.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let link = world.channel(world.rank(), 0)?;
    /// let pending = link.isend(b"hello".to_vec())?;
    /// let mut buf = [0u8; 16];
    /// let n = link.recv(&mut buf)?; // how many bytes arrived
    /// assert_eq!(&buf[..n], b"hello");
    /// pending.wait().1?;
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Communicator::recv`] (class `Truncate` if the message is longer than `buf`).
    pub fn recv(&self, buf: &mut [u8]) -> Result<usize> {
        self.comm.recv(buf, self.peer, self.tag)?.count::<u8>()
    }

    /// Sends a slice of any [`Equivalence`] type (`bytemuck::Pod` structs via
    /// [`Bytes`](crate::Bytes)).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let link = world.channel(world.rank(), 0)?;
    /// let pending = link.irecv(vec![0.0f64; 2])?;
    /// link.send_slice(&[0.5f64, 1.5])?;
    /// assert_eq!(pending.wait().0, [0.5, 1.5]);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Communicator::send`].
    pub fn send_slice<T: Equivalence>(&self, values: &[T]) -> Result<()> {
        self.comm.send(values, self.peer, self.tag)
    }

    /// Receives a message of any length from the peer into a new `Vec`.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let link = world.channel(world.rank(), 0)?;
    /// let pending = link.isend(vec![1u16, 2, 3])?;
    /// assert_eq!(link.recv_vec::<u16>()?, [1, 2, 3]); // sized by the message
    /// pending.wait().1?;
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Communicator::recv_vec`].
    pub fn recv_vec<T: Equivalence>(&self) -> Result<Vec<T>> {
        Ok(self.comm.recv_vec(self.peer, self.tag)?.0)
    }

    /// Starts sending an owned buffer; `.await` or `wait` the request to get it back.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let link = world.channel(world.rank(), 0)?;
    /// let pending = link.isend(vec![7i32])?; // the request owns the vector
    /// assert_eq!(link.recv_vec::<i32>()?, [7]);
    /// let (sent, status) = pending.wait();
    /// status?;
    /// assert_eq!(sent, [7]);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Communicator::isend_owned`].
    pub fn isend<B: OwnedBuffer>(&self, buf: B) -> Result<OwnedRequest<'_, B>> {
        self.comm.isend_owned(buf, self.peer, self.tag)
    }

    /// Starts receiving into an owned buffer; `.await` or `wait` the request to get it back.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let link = world.channel(world.rank(), 0)?;
    /// let pending = link.irecv(vec![0u8; 1])?;
    /// link.send(&[1])?;
    /// let (got, status) = pending.wait();
    /// assert_eq!((got, status?.count::<u8>()?), (vec![1], 1));
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Communicator::irecv_owned`].
    pub fn irecv<B: OwnedBuffer>(&self, buf: B) -> Result<OwnedRequest<'_, B>> {
        self.comm.irecv_owned(buf, self.peer, self.tag)
    }

    /// Sends any serializable value (feature `serde`).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let link = world.channel(world.rank(), 0)?;
    /// let pending = link.isend_value(&"bounds")?;
    /// let text: String = link.recv_value()?;
    /// pending.wait().1?;
    /// assert_eq!(text, "bounds");
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Communicator::send_value`].
    #[cfg(feature = "serde")]
    #[cfg_attr(docsrs, doc(cfg(feature = "serde")))]
    pub fn send_value<T: serde::Serialize + ?Sized>(&self, value: &T) -> Result<()> {
        self.comm.send_value(value, self.peer, self.tag)
    }

    /// Receives a value sent with [`Channel::send_value`] (feature `serde`).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let link = world.channel(world.rank(), 0)?;
    /// let pending = link.isend_value(&(1u8, 2.5f64))?;
    /// let pair: (u8, f64) = link.recv_value()?;
    /// pending.wait().1?;
    /// assert_eq!(pair, (1, 2.5));
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Communicator::recv_value`].
    #[cfg(feature = "serde")]
    #[cfg_attr(docsrs, doc(cfg(feature = "serde")))]
    pub fn recv_value<T: serde::de::DeserializeOwned>(&self) -> Result<T> {
        let (value, _) = self.comm.recv_value(self.peer, self.tag)?;
        Ok(value.expect("a channel's peer is a rank, so a value arrives"))
    }

    /// Starts sending a serializable value (feature `serde`).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let link = world.channel(world.rank(), 0)?;
    /// let pending = link.isend_value(&vec![3u32; 2])?; // encoded now, sent in the background
    /// assert_eq!(link.recv_value::<Vec<u32>>()?, [3, 3]);
    /// pending.wait().1?;
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Communicator::isend_value`].
    #[cfg(feature = "serde")]
    #[cfg_attr(docsrs, doc(cfg(feature = "serde")))]
    pub fn isend_value<T: serde::Serialize + ?Sized>(
        &self,
        value: &T,
    ) -> Result<OwnedRequest<'_, Vec<u8>>> {
        self.comm.isend_value(value, self.peer, self.tag)
    }

    /// A future receiving a value from the peer (feature `serde`); the value is always `Some`,
    /// since the peer is a rank.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let link = world.channel(world.rank(), 0)?;
    /// let sending = link.isend_value(&42u64)?;
    /// let (value, _) = futures::executor::block_on(link.recv_value_async::<u64>())?;
    /// assert_eq!(value, Some(42)); // always Some: the peer is a rank
    /// sending.wait().1?;
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    #[cfg(feature = "serde")]
    #[cfg_attr(docsrs, doc(cfg(feature = "serde")))]
    pub fn recv_value_async<T: serde::de::DeserializeOwned>(
        &self,
    ) -> crate::comm::typed::RecvValue<'_, 'env, T> {
        self.comm.recv_value_async(self.peer, self.tag)
    }

    /// Closes the channel, freeing its communicator.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let link = world.channel(world.rank(), 0)?;
    /// link.close()?; // frees its communicator now
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Communicator::free`].
    pub fn close(self) -> Result<()> {
        self.comm.free()
    }
}
