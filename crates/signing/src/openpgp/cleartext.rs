//! Cleartext signatures over a file (`gpg --clearsign`): apt's `InRelease`, or any text file.
//!
//! A cleartext signature (RFC 9580 §7) covers the text with every line's trailing spaces and
//! tabs removed and CRLF line endings; what a verifier shows or hands on is the text as the
//! message carries it. So only a file the signature covers exactly is signed: UTF-8 text,
//! lines ending in LF, no control characters but tabs, no line ending in a space or tab. Any
//! other file is refused with the line that stops it ([`TextProblem`]) — signed detached, it
//! needs none of this.

use crate::input::InputFile;
use crate::{Result, SignError};

/// The largest file signed in cleartext: the message holds the whole text, read into
/// memory (apt's `Release` files are kilobytes; a larger text is signed detached).
pub const MAX_CLEARTEXT: u64 = 64 << 20;

/// Why a file cannot be signed in cleartext.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextProblem {
    /// Not UTF-8.
    NotUtf8,
    /// A control character other than a tab (a NUL of a binary file, an escape…).
    ControlCharacter {
        line: usize,
    },
    /// A line ends in a carriage return (CRLF or CR line endings).
    CarriageReturn {
        line: usize,
    },
    /// A line ends in a space or tab, which the signature does not cover.
    TrailingWhitespace {
        line: usize,
    },
    TooLarge,
}

impl TextProblem {
    /// The reason as the officer reads it, after the file's path ("PATH REASON.").
    pub fn msg(self) -> hsm::Text {
        match self {
            TextProblem::NotUtf8 => hsm::text!(
                "signing.openpgp.text.not_utf8",
                "is not UTF-8 text, and a cleartext signature is made over lines of text; sign it with a detached format (openpgp)"
            ),
            TextProblem::ControlCharacter { line } => hsm::text!(
                "signing.openpgp.text.control_character",
                "has a control character on line {{line}}: it is not a text file, and a cleartext signature is made over lines of text; sign it with a detached format (openpgp)",
                line = line
            ),
            TextProblem::CarriageReturn { line } => hsm::text!(
                "signing.openpgp.text.carriage_return",
                "has a carriage return at the end of line {{line}} (Windows line endings): a cleartext signature's verifier hands on the text with other line endings than the file's; convert it to LF line endings or sign it with a detached format (openpgp)",
                line = line
            ),
            TextProblem::TrailingWhitespace { line } => hsm::text!(
                "signing.openpgp.text.trailing_whitespace",
                "has a space or tab at the end of line {{line}}, which a cleartext signature does not cover (RFC 9580 removes it before hashing); remove it or sign the file with a detached format (openpgp)",
                line = line
            ),
            TextProblem::TooLarge => hsm::text!(
                "signing.openpgp.text.too_large",
                "is larger than {{max}} MiB, too large for a cleartext signature, which holds the whole text; sign it with a detached format (openpgp)",
                max = MAX_CLEARTEXT >> 20
            ),
        }
    }
}

/// The text of `bytes` if a cleartext signature covers it exactly, else the first problem.
pub fn as_text(bytes: &[u8]) -> std::result::Result<&str, TextProblem> {
    let text = std::str::from_utf8(bytes).map_err(|_| TextProblem::NotUtf8)?;
    for (i, line) in text.split('\n').enumerate() {
        let line_no = i + 1;
        if line.ends_with('\r') {
            return Err(TextProblem::CarriageReturn { line: line_no });
        }
        if line.chars().any(|c| c.is_control() && c != '\t') {
            return Err(TextProblem::ControlCharacter { line: line_no });
        }
        if line.ends_with([' ', '\t']) {
            return Err(TextProblem::TrailingWhitespace { line: line_no });
        }
    }
    Ok(text)
}

/// The text of a file to be cleartext-signed: read again, it must be the file hashed before
/// (`expected_sha256`), not too large, and text a cleartext signature covers exactly — else
/// the file is refused by name with the line that stops it. Sign it with
/// [`super::cleartext_signed`].
pub fn read_text(input: &InputFile, expected_sha256: &str) -> Result<String> {
    if input.size() > MAX_CLEARTEXT {
        return Err(refusal(input, TextProblem::TooLarge));
    }
    let mut bytes = Vec::with_capacity(input.size() as usize);
    crate::reread::stream_same(input, expected_sha256, &mut |b| bytes.extend_from_slice(b))?;
    as_text(&bytes).map_err(|p| refusal(input, p))?;
    String::from_utf8(bytes).map_err(|_| refusal(input, TextProblem::NotUtf8))
}

fn refusal(input: &InputFile, p: TextProblem) -> SignError {
    SignError::Input {
        path: input.path.display().to_string(),
        reason: p.msg(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_text_a_cleartext_signature_covers_exactly_is_text() {
        let release = "Origin: example\nDate: Sun, 06 Dec 2026 09:23:18 +0000\nSHA256:\n 43ab  452 Packages\n";
        assert_eq!(as_text(release.as_bytes()), Ok(release));
        assert_eq!(as_text(b"no final newline"), Ok("no final newline"));
        assert_eq!(
            as_text(b"-----BEGIN x\n\tindented\n"),
            Ok("-----BEGIN x\n\tindented\n")
        );
        assert_eq!(as_text(&[0xff, 0xfe, b'a']), Err(TextProblem::NotUtf8));
        assert_eq!(
            as_text(b"ok\nbin\0ary\n"),
            Err(TextProblem::ControlCharacter { line: 2 })
        );
        assert_eq!(
            as_text(b"a\r\nb\r\n"),
            Err(TextProblem::CarriageReturn { line: 1 })
        );
        assert_eq!(
            as_text(b"a\nb\nc \n"),
            Err(TextProblem::TrailingWhitespace { line: 3 })
        );
        assert_eq!(
            as_text(b"a\t\n"),
            Err(TextProblem::TrailingWhitespace { line: 1 })
        );
        assert_eq!(
            as_text(b"a\x1b[1m\n"),
            Err(TextProblem::ControlCharacter { line: 1 })
        );
    }

    #[test]
    fn a_file_is_read_as_text_only_when_it_is_the_file_hashed_and_text() {
        use sha2::{Digest, Sha256};
        let d = tempfile::tempdir().unwrap();
        let sha = |b: &[u8]| hex::encode(Sha256::digest(b));
        let release = d.path().join("Release");
        std::fs::write(&release, "Origin: x\nSuite: stable\n").unwrap();
        let input = crate::input::check(&release).unwrap();
        let text = read_text(&input, &sha(b"Origin: x\nSuite: stable\n")).unwrap();
        assert_eq!(text, "Origin: x\nSuite: stable\n");
        // Not the bytes hashed: refused as a changed file, not signed over.
        assert!(matches!(
            read_text(&input, &sha(b"other")),
            Err(SignError::Changed(_))
        ));
        let dos = d.path().join("notes.txt");
        std::fs::write(&dos, "a\r\nb\r\n").unwrap();
        let input = crate::input::check(&dos).unwrap();
        match read_text(&input, &sha(b"a\r\nb\r\n")) {
            Err(SignError::Input { path, reason }) => {
                assert!(path.ends_with("notes.txt"), "{path}");
                assert_eq!(reason.key, "signing.openpgp.text.carriage_return");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn each_problem_names_its_line() {
        let m = TextProblem::TrailingWhitespace { line: 7 }.msg();
        assert_eq!(m.key, "signing.openpgp.text.trailing_whitespace");
        assert!(m.text.contains("line 7"), "{m}");
        assert!(TextProblem::TooLarge.msg().text.contains("64 MiB"));
    }
}
