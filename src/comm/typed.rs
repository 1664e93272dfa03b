//! Typed messages (feature `serde`): any `Serialize` value sent, any `Deserialize` value
//! received, encoded with postcard's compact binary format and sized on receipt by a matched
//! probe, so neither side needs to know the encoded length.

use super::Communicator;
use super::p2p::{Destination, Source, Status, TagMatch};
use crate::error::{ErrorKind, Result};
use crate::request::{OwnedRequest, progress};
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::task::{Context, Poll};

fn encode<T: Serialize + ?Sized>(value: &T, operation: &'static str) -> Result<Vec<u8>> {
    postcard::to_allocvec(value).map_err(|e| {
        ErrorKind::Codec {
            operation,
            reason: e.to_string(),
        }
        .into()
    })
}

/// The value a receive from `source` carried: none from `PROC_NULL`.
fn decode_from<T: DeserializeOwned>(
    source: Source,
    bytes: &[u8],
    operation: &'static str,
) -> Result<Option<T>> {
    if source == Source::ProcNull {
        return Ok(None);
    }
    postcard::from_bytes(bytes).map(Some).map_err(|e| {
        ErrorKind::Codec {
            operation,
            reason: e.to_string(),
        }
        .into()
    })
}

/// Typed messages: any `Serialize` value, sent and received as bytes (feature `serde`).
///
/// ```
/// # let mpi = ferrompi::Mpi::init()?;
/// let world = mpi.world();
/// let me = world.rank();
/// let pending = world.isend_value(&("cuts", vec![1.0f64, 2.0]), me, 3)?;
/// let (value, _status) = world.recv_value::<(String, Vec<f64>)>(me, 3)?;
/// assert_eq!(value, Some(("cuts".to_string(), vec![1.0, 2.0])));
/// pending.wait().1?;
/// # Ok::<(), ferrompi::Error>(())
/// ```
impl<'env> Communicator<'env> {
    /// Sends any serializable value (encoded with postcard) to `dest`.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let me = world.rank();
    /// let receiving = world.irecv_owned(vec![0u8; 64], me, 0)?; // room for the encoding
    /// world.send_value(&(1u32, "cut"), me, 0)?;
    /// receiving.wait().1?;
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::Codec`] if the value cannot be encoded; otherwise as
    /// [`Communicator::send`].
    pub fn send_value<T: Serialize + ?Sized>(
        &self,
        value: &T,
        dest: impl Into<Destination>,
        tag: i32,
    ) -> Result<()> {
        self.send(&encode(value, "send_value")?, dest, tag)
    }

    /// Receives a value sent with [`send_value`](Communicator::send_value) (or its async
    /// forms), of any encoded size.
    ///
    /// The value is `None` exactly when `source` is [`PROC_NULL`](crate::PROC_NULL): such a
    /// receive completes at once with no message (MPI-4.0 §3.11) and the status says so
    /// (`source()` is `MPI_PROC_NULL`, count 0), as mpi4py's `recv` returns `None`. From a rank or
    /// [`ANY_SOURCE`](crate::ANY_SOURCE) it is always `Some`.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let me = world.rank();
    /// let sending = world.isend_value(&vec![0.5f64, 1.5], me, 1)?;
    /// let (value, status) = world.recv_value::<Vec<f64>>(me, 1)?; // None from PROC_NULL
    /// assert_eq!((value, status.tag()), (Some(vec![0.5, 1.5]), 1));
    /// sending.wait().1?;
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::Codec`] if the bytes do not decode as `T`; otherwise as
    /// [`Communicator::recv_vec`].
    pub fn recv_value<T: DeserializeOwned>(
        &self,
        source: impl Into<Source>,
        tag: impl Into<TagMatch>,
    ) -> Result<(Option<T>, Status)> {
        let source = source.into();
        let (bytes, status) = self.recv_vec::<u8>(source, tag)?;
        Ok((decode_from(source, &bytes, "recv_value")?, status))
    }

    /// Starts sending a serializable value; the request owns the encoded bytes.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let me = world.rank();
    /// let sending = world.isend_value(&Some(3u8), me, 2)?; // encoded now, owned by the request
    /// let (value, _) = world.recv_value::<Option<u8>>(me, 2)?;
    /// assert_eq!(value, Some(Some(3)));
    /// sending.wait().1?;
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Communicator::send_value`].
    pub fn isend_value<T: Serialize + ?Sized>(
        &self,
        value: &T,
        dest: impl Into<Destination>,
        tag: i32,
    ) -> Result<OwnedRequest<'_, Vec<u8>>> {
        self.isend_owned(encode(value, "isend_value")?, dest, tag)
    }

    /// A future receiving a value sent with [`send_value`](Communicator::send_value): it
    /// matched-probes without blocking until the message is there, then receives it without
    /// blocking, and decodes it. Its value is `None` exactly when `source` is
    /// [`PROC_NULL`](crate::PROC_NULL), as with [`recv_value`](Communicator::recv_value).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let me = world.rank();
    /// let sending = world.isend_value(&"hello", me, 0)?;
    /// let receiving = world.recv_value_async::<String>(me, 0); // a future; any executor drives it
    /// let (value, _) = futures::executor::block_on(receiving)?;
    /// assert_eq!(value.as_deref(), Some("hello"));
    /// sending.wait().1?;
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    pub fn recv_value_async<T: DeserializeOwned>(
        &self,
        source: impl Into<Source>,
        tag: impl Into<TagMatch>,
    ) -> RecvValue<'_, 'env, T> {
        RecvValue {
            comm: self,
            source: source.into(),
            tag: tag.into(),
            receiving: None,
            _value: PhantomData,
        }
    }
}

/// The future of [`Communicator::recv_value_async`].
#[must_use = "futures do nothing unless awaited"]
#[derive(Debug)]
pub struct RecvValue<'c, 'env, T> {
    comm: &'c Communicator<'env>,
    source: Source,
    tag: TagMatch,
    receiving: Option<OwnedRequest<'c, Vec<u8>>>,
    _value: PhantomData<fn() -> T>,
}

impl<T: DeserializeOwned> Future for RecvValue<'_, '_, T> {
    type Output = Result<(Option<T>, Status)>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        if this.receiving.is_none() {
            match this.comm.improbe(this.source, this.tag) {
                Err(e) => return Poll::Ready(Err(e)),
                Ok(None) => {
                    progress::wake_soon(cx.waker());
                    return Poll::Pending;
                }
                Ok(Some(message)) => {
                    let started = message
                        .status()
                        .count::<u8>()
                        .and_then(|n| message.irecv_owned(vec![0u8; n]));
                    match started {
                        Ok(request) => this.receiving = Some(request),
                        Err(e) => return Poll::Ready(Err(e)),
                    }
                }
            }
        }
        let request = this.receiving.as_mut().expect("set above");
        match Pin::new(request).poll(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready((bytes, status)) => {
                this.receiving = None;
                Poll::Ready(status.and_then(|status| {
                    Ok((
                        decode_from(this.source, &bytes, "recv_value_async")?,
                        status,
                    ))
                }))
            }
        }
    }
}
