//! Why the reference codec refused a signature or a message. The texts are the
//! ones a cell's reason shows when an adapter emits malformed bytes.

/// A malformed signature or message.
#[derive(Debug, thiserror::Error)]
pub enum WireError {
    #[error("empty signature")]
    EmptySignature,
    #[error("empty type")]
    EmptyType,
    #[error("mismatched brackets in {0:?}")]
    MismatchedBrackets(String),
    #[error("unclosed container in {0:?}")]
    UnclosedContainer(String),
    /// `sig` is the signature being split, when the code came from one.
    #[error("unknown type code {code:?}{}", sig.as_ref().map(|s| format!(" in signature {s:?}")).unwrap_or_default())]
    UnknownTypeCode { code: char, sig: Option<String> },
    #[error("message ends inside padding")]
    EndsInPadding,
    #[error("non-zero padding byte at offset {offset}")]
    NonZeroPadding { offset: usize },
    #[error("length overflow")]
    LengthOverflow,
    #[error("message ends at {len} but {needed} more bytes were needed at offset {offset}")]
    Truncated { len: usize, needed: usize, offset: usize },
    #[error("string at offset {offset} is not NUL-terminated")]
    StringNotTerminated { offset: usize },
    #[error("signature not NUL-terminated")]
    SignatureNotTerminated,
    /// `what`: "string" or "signature".
    #[error("{what} is not UTF-8")]
    NotUtf8 { what: &'static str },
    #[error("boolean with value {0}")]
    BadBoolean(u32),
    #[error("variant signature {0:?} is not a single type")]
    VariantNotSingle(String),
    #[error("array of {len} bytes runs past the message end")]
    ArrayPastEnd { len: usize },
    #[error("array elements overrun the array length")]
    ArrayOverrun,
    #[error("dict entry {0:?} must have two types")]
    DictEntryArity(String),
    #[error("{0} bytes is too short for a D-Bus header")]
    TooShort(usize),
    #[error("endianness byte is {0:#04x}, expected 'l' or 'B'")]
    BadEndianness(u8),
    #[error("malformed header field {0}")]
    MalformedHeaderField(String),
    #[error("header says the body is {body_len} bytes, so the message is {end} bytes, but {given} bytes were given")]
    LengthMismatch { body_len: u32, end: usize, given: usize },
    #[error("body has {0} trailing bytes")]
    TrailingBytes(usize),
    /// Where in the message `source` happened; shown as "context: source"
    /// by anyhow's `{:#}`, as `.context()` did before.
    #[error("{context}")]
    In {
        context: String,
        #[source]
        source: Box<WireError>,
    },
}

impl WireError {
    pub(crate) fn context(context: impl Into<String>, source: WireError) -> Self {
        WireError::In {
            context: context.into(),
            source: Box::new(source),
        }
    }
}
