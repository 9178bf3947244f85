//! Images attached to the prompt: `--image PATH` and the `images` of a schema-2 `message`
//! input line. Each is checked before anything is sent: a supported type
//! (PNG, JPEG, GIF, WebP) whose bytes really are that type, at most 10 MiB decoded, at most
//! 16 per prompt. The data is kept as base64, the form every provider takes.
//!
//! Image data is sent to the provider only: it is never written to stdout, and a session
//! records that an image was there (its type and size), not its bytes.

use std::io::Read;
use std::path::{Path, PathBuf};

/// The largest image, decoded.
pub const MAX_IMAGE_BYTES: usize = 10 * 1024 * 1024;
/// The most images one prompt may carry.
pub const MAX_IMAGES: usize = 16;
/// The media types zero sends.
pub const MEDIA_TYPES: &[&str] = &["image/png", "image/jpeg", "image/gif", "image/webp"];

/// One image, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Image {
    pub media_type: &'static str,
    /// Standard base64 with padding.
    pub data: String,
    /// Decoded size in bytes.
    pub bytes: usize,
}

impl Image {
    /// `data:<type>;base64,<data>`, for the OpenAI APIs.
    pub fn data_url(&self) -> String {
        format!("data:{};base64,{}", self.media_type, self.data)
    }
}

/// The type the bytes' signature says, if it is one zero sends.
pub fn sniff(head: &[u8]) -> Option<&'static str> {
    if head.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("image/png")
    } else if head.starts_with(&[0xff, 0xd8, 0xff]) {
        Some("image/jpeg")
    } else if head.starts_with(b"GIF87a") || head.starts_with(b"GIF89a") {
        Some("image/gif")
    } else if head.len() >= 12 && head.starts_with(b"RIFF") && &head[8..12] == b"WEBP" {
        Some("image/webp")
    } else {
        None
    }
}

/// Why an `--image` file cannot be attached: its path, and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ImageError {
    NotFound(PathBuf),
    Unreadable {
        path: PathBuf,
        reason: String,
    },
    NotRegular(PathBuf),
    TooLarge(PathBuf),
    /// Its bytes are no PNG, JPEG, GIF or WebP image.
    NotAnImage(PathBuf),
}

impl std::fmt::Display for ImageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ImageError::NotFound(path) => write!(f, "Image not found: {}", path.display()),
            ImageError::Unreadable { path, reason } => {
                write!(f, "Cannot read image {}: {reason}", path.display())
            }
            ImageError::NotRegular(path) => {
                write!(f, "Image is not a regular file: {}", path.display())
            }
            ImageError::TooLarge(path) => {
                write!(f, "Image is larger than 10 MiB: {}", path.display())
            }
            ImageError::NotAnImage(path) => {
                write!(f, "Image is not a PNG, JPEG, GIF or WebP file: {}", path.display())
            }
        }
    }
}

impl std::error::Error for ImageError {}

impl From<ImageError> for crate::error::Failure {
    fn from(err: ImageError) -> Self {
        crate::error::Failure::Usage(err.to_string())
    }
}

/// `--image PATH`: the file's type comes from its bytes.
pub fn from_file(path: &Path) -> Result<Image, ImageError> {
    use std::os::unix::fs::OpenOptionsExt;
    /// `O_NONBLOCK`: opening a FIFO must not wait for a writer.
    const O_NONBLOCK: i32 = 0o4000;
    let owned = || path.to_path_buf();
    let file = std::fs::OpenOptions::new().read(true).custom_flags(O_NONBLOCK).open(path);
    let file = file.map_err(|err| match err.kind() {
        std::io::ErrorKind::NotFound => ImageError::NotFound(owned()),
        _ => ImageError::Unreadable { path: owned(), reason: err.to_string() },
    })?;
    if file.metadata().is_ok_and(|m| !m.is_file()) {
        return Err(ImageError::NotRegular(owned()));
    }
    let mut bytes = Vec::new();
    file.take(MAX_IMAGE_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|err| ImageError::Unreadable { path: owned(), reason: err.to_string() })?;
    if bytes.len() > MAX_IMAGE_BYTES {
        return Err(ImageError::TooLarge(owned()));
    }
    let media_type = sniff(&bytes).ok_or_else(|| ImageError::NotAnImage(owned()))?;
    Ok(Image { media_type, data: encode(&bytes), bytes: bytes.len() })
}

/// What is wrong with an image of an input line: the field it is in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InputImageError {
    /// `mediaType` is not one zero sends.
    MediaType(String),
    /// `data` is not base64, empty, too large, or not an image of that type.
    Data(String),
}

crate::error::message_error!(InputImageError: MediaType, Data);

/// An image of an input line: `mediaType` must be one zero sends and say what the bytes are.
/// The error names the field (`mediaType` or `data`).
pub fn from_input(media_type: &str, data: &str) -> Result<Image, InputImageError> {
    let Some(&media_type) = MEDIA_TYPES.iter().find(|t| **t == media_type) else {
        return Err(InputImageError::MediaType(format!(
            "mediaType: expected one of {}, got {}",
            MEDIA_TYPES.join(", "),
            serde_json::Value::String(crate::text::summarize(media_type))
        )));
    };
    let data_error = |detail: &str| InputImageError::Data(format!("data: {detail}"));
    let bytes = decoded_len(data).ok_or_else(|| data_error("not valid base64"))?;
    if bytes == 0 {
        return Err(data_error("must not be empty"));
    }
    if bytes > MAX_IMAGE_BYTES {
        return Err(data_error("the image is larger than 10 MiB"));
    }
    // The signature is in the first 12 bytes: 16 base64 characters.
    let head = decode(&data[..data.len().min(16)]).unwrap_or_default();
    match sniff(&head) {
        Some(found) if found == media_type => {}
        Some(found) => return Err(data_error(&format!("the image is {found}, not {media_type}"))),
        None => {
            return Err(data_error(&format!("the bytes are not an image of type {media_type}")))
        }
    }
    Ok(Image { media_type, data: data.to_string(), bytes })
}

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Standard base64 with padding.
pub fn encode(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [chunk[0], *chunk.get(1).unwrap_or(&0), *chunk.get(2).unwrap_or(&0)];
        let n = u32::from(b[0]) << 16 | u32::from(b[1]) << 8 | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

fn value_of(c: u8) -> Option<u32> {
    ALPHABET.iter().position(|&a| a == c).map(|v| v as u32)
}

/// The decoded length of standard base64 (padding required, no whitespace), or `None` when
/// the text is not that.
fn decoded_len(text: &str) -> Option<usize> {
    let b = text.as_bytes();
    if !b.len().is_multiple_of(4) {
        return None;
    }
    let pad = b.iter().rev().take_while(|&&c| c == b'=').count();
    if pad > 2
        || b[..b.len() - pad]
            .iter()
            .any(|&c| !(c.is_ascii_alphanumeric() || c == b'+' || c == b'/'))
    {
        return None;
    }
    Some(b.len() / 4 * 3 - pad)
}

/// Decodes standard base64 (a whole number of 4-character groups).
pub fn decode(text: &str) -> Option<Vec<u8>> {
    decoded_len(text)?;
    let mut out = Vec::with_capacity(text.len() / 4 * 3);
    for group in text.as_bytes().chunks(4) {
        let mut n = 0u32;
        let mut real = 0;
        for &c in group {
            n <<= 6;
            if c != b'=' {
                n |= value_of(c)?;
                real += 1;
            }
        }
        let bytes = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        out.extend_from_slice(&bytes[..real - 1]);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";

    #[test]
    fn base64_round_trips_every_length() {
        for len in 0..40usize {
            let bytes: Vec<u8> = (0..len).map(|i| (i * 37 + 11) as u8).collect();
            let text = encode(&bytes);
            assert_eq!(decode(&text).as_deref(), Some(&bytes[..]), "{len}");
            assert_eq!(decoded_len(&text), Some(len));
        }
        assert_eq!(encode(b"Man"), "TWFu");
        assert_eq!(encode(b"Ma"), "TWE=");
        assert_eq!(encode(b"M"), "TQ==");
        for bad in ["TWF", "TW=u", "TQ===", "T Fu", "TWF\n", "TWF-"] {
            assert_eq!(decoded_len(bad), None, "{bad}");
        }
    }

    #[test]
    fn signatures_decide_the_type() {
        assert_eq!(sniff(PNG), Some("image/png"));
        assert_eq!(sniff(&[0xff, 0xd8, 0xff, 0xe0]), Some("image/jpeg"));
        assert_eq!(sniff(b"GIF89a...."), Some("image/gif"));
        assert_eq!(sniff(b"RIFF\0\0\0\0WEBPVP8 "), Some("image/webp"));
        assert_eq!(sniff(b"RIFF\0\0\0\0WAVE"), None);
        assert_eq!(sniff(b"<svg"), None);
    }

    #[test]
    fn input_images_are_checked_field_by_field() {
        let png = encode(PNG);
        let image = from_input("image/png", &png).unwrap();
        assert_eq!((image.media_type, image.bytes), ("image/png", PNG.len()));
        assert!(image.data_url().starts_with("data:image/png;base64,iVBORw0KGgo"));
        let err = |t: &str, d: &str| from_input(t, d).unwrap_err();
        assert_eq!(
            err("image/svg+xml", &png),
            InputImageError::MediaType("mediaType: expected one of image/png, image/jpeg, image/gif, image/webp, got \"image/svg+xml\"".into())
        );
        assert_eq!(
            err("image/jpeg", &png),
            InputImageError::Data("data: the image is image/png, not image/jpeg".into())
        );
        assert_eq!(
            err("image/png", &encode(b"hello world!")),
            InputImageError::Data("data: the bytes are not an image of type image/png".into())
        );
        assert_eq!(
            err("image/png", "not base64!"),
            InputImageError::Data("data: not valid base64".into())
        );
        assert_eq!(err("image/png", ""), InputImageError::Data("data: must not be empty".into()));
        let huge = "A".repeat((MAX_IMAGE_BYTES / 3 + 1) * 4);
        assert_eq!(
            err("image/png", &huge),
            InputImageError::Data("data: the image is larger than 10 MiB".into())
        );
    }

    #[test]
    fn files_are_read_typed_and_capped() {
        let dir = crate::testing::kit::TempDir::new("images");
        dir.write("shot.png", "");
        std::fs::write(dir.join("shot.png"), PNG).unwrap();
        let image = from_file(&dir.join("shot.png")).unwrap();
        assert_eq!((image.media_type, decode(&image.data).unwrap()), ("image/png", PNG.to_vec()));
        dir.write("notes.txt", "plain text");
        let err = from_file(&dir.join("notes.txt")).unwrap_err();
        assert_eq!(err, ImageError::NotAnImage(dir.join("notes.txt")));
        assert!(err.to_string().starts_with("Image is not a PNG, JPEG, GIF or WebP file: "));
        assert_eq!(
            from_file(&dir.join("missing.png")).unwrap_err(),
            ImageError::NotFound(dir.join("missing.png"))
        );
        assert_eq!(from_file(&dir.path).unwrap_err(), ImageError::NotRegular(dir.path.clone()));
        let fifo = dir.join("pipe.png");
        let made = crate::sys::process::serialized(|| {
            std::process::Command::new("mkfifo").arg(&fifo).status()
        });
        if made.is_ok_and(|s| s.success()) {
            // Refused at once, not a wait for a writer that never comes.
            assert_eq!(from_file(&fifo).unwrap_err(), ImageError::NotRegular(fifo.clone()));
        }
        let mut big = PNG.to_vec();
        big.resize(MAX_IMAGE_BYTES + 1, 0);
        std::fs::write(dir.join("big.png"), big).unwrap();
        let err = from_file(&dir.join("big.png")).unwrap_err();
        assert!(err.to_string().starts_with("Image is larger than 10 MiB: "), "{err}");
    }
}
