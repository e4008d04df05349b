//! A real RFC 3161 time-stamp authority on 127.0.0.1 for tests and benches: OpenSSL's
//! `openssl ts -reply` behind a small HTTP handler (a std `TcpListener` thread), with a CA
//! and a TSA certificate (critical `timeStamping` EKU) made with OpenSSL.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Command;

fn s(p: &Path) -> &str {
    p.to_str().expect("UTF-8 path")
}

fn run(cmd: &mut Command) -> (bool, String) {
    let o = cmd.output().expect("the command runs");
    (
        o.status.success(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        ),
    )
}

fn openssl(dir: &Path, args: &[&str]) {
    let (ok, msg) = run(Command::new("openssl").current_dir(dir).args(args));
    assert!(ok, "openssl {args:?}: {msg}");
}

/// A TSA on 127.0.0.1: each request piped into `openssl ts -reply`. The path picks what it
/// does: `/ok`, `/wrong-imprint` (stamps another hash), `/bad-signature` (a byte of the
/// signature flipped), `/reject` (a TSA section that accepts no SHA-2 imprint: OpenSSL
/// answers `rejection`), `/ess-sha1` (names its certificate in a `signingCertificate`
/// attribute with SHA-1, as `ess_cert_id_alg = sha1` makes OpenSSL do, instead of the
/// `signingCertificateV2` with SHA-256 of the others), `/silent` (reads the request, never
/// answers), `/slow` (answers after 2 s), `/gate` (answers once the test calls
/// [`TestTsa::open_gate`]; [`TestTsa::waiting_at_gate`] counts the queries held), `/drop`
/// (sends half its answer and closes the connection), `/drop-every-3rd` (so does every
/// third exchange, by arrival).
pub struct TestTsa {
    pub dir: tempfile::TempDir,
    pub port: u16,
}

impl TestTsa {
    /// `key`: an `openssl req -newkey` argument (`ec` with P-256, or `rsa:2048`).
    pub fn start(key: &str) -> TestTsa {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let newkey: Vec<&str> = if key == "ec" {
            vec!["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256"]
        } else {
            vec!["-newkey", key]
        };
        for (ca, cn) in [("ca", "Test TSA Root"), ("other-ca", "Some Other Root")] {
            let mut a = vec!["req", "-x509", "-nodes"];
            a.extend(&newkey);
            let (k, c, subj) = (
                format!("{ca}.key"),
                format!("{ca}.pem"),
                format!("/CN={cn}"),
            );
            a.extend([
                "-keyout",
                &k,
                "-out",
                &c,
                "-subj",
                &subj,
                "-days",
                "30",
                "-addext",
                "basicConstraints=critical,CA:true",
                "-addext",
                "keyUsage=critical,keyCertSign",
            ]);
            openssl(d, &a);
        }
        let mut a = vec!["req", "-nodes"];
        a.extend(&newkey);
        a.extend([
            "-keyout",
            "tsa.key",
            "-out",
            "tsa.csr",
            "-subj",
            "/CN=Test TSA/O=Timestamps",
        ]);
        openssl(d, &a);
        std::fs::write(
            d.join("tsa-ext.cnf"),
            "extendedKeyUsage=critical,timeStamping\nkeyUsage=critical,digitalSignature\n",
        )
        .unwrap();
        openssl(
            d,
            &[
                "x509",
                "-req",
                "-in",
                "tsa.csr",
                "-CA",
                "ca.pem",
                "-CAkey",
                "ca.key",
                "-CAcreateserial",
                "-out",
                "tsa.pem",
                "-days",
                "30",
                "-extfile",
                "tsa-ext.cnf",
            ],
        );
        std::fs::write(d.join("serial"), "01\n").unwrap();
        let section = |name: &str, digests: &str, ess: &str| {
            format!(
                "[ {name} ]\nserial = {dir}/serial\ncrypto_device = builtin\nsigner_cert = {dir}/tsa.pem\n\
                 certs = {dir}/ca.pem\nsigner_key = {dir}/tsa.key\nsigner_digest = sha256\n\
                 default_policy = 1.2.3.4.1\ndigests = {digests}\naccuracy = secs:1, millisecs:500\n\
                 clock_precision_digits = 0\nordering = no\ntsa_name = yes\ness_cert_id_chain = no\n\
                 ess_cert_id_alg = {ess}\n",
                dir = d.display()
            )
        };
        std::fs::write(
            d.join("tsa.cnf"),
            format!(
                "[ tsa ]\ndefault_tsa = tsa_ok\n{}{}{}",
                section("tsa_ok", "sha256, sha384, sha512", "sha256"),
                section("tsa_reject", "sha1", "sha256"),
                section("tsa_ess_sha1", "sha256, sha384, sha512", "sha1")
            ),
        )
        .unwrap();
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let root = d.to_path_buf();
        std::thread::spawn(move || {
            for (n, stream) in listener.incoming().enumerate() {
                let root = root.clone();
                std::thread::spawn(move || answer(&root, n, stream.unwrap()));
            }
        });
        TestTsa { dir, port }
    }

    pub fn url(&self, mode: &str) -> String {
        format!("http://127.0.0.1:{}/{mode}", self.port)
    }

    /// Let every `/gate` query be answered (now and from now on).
    pub fn open_gate(&self) {
        std::fs::write(self.dir.path().join("gate-open"), b"").unwrap();
    }

    /// `/gate` queries received and not answered yet.
    pub fn waiting_at_gate(&self) -> usize {
        std::fs::read_dir(self.dir.path())
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .is_ok_and(|e| e.file_name().to_string_lossy().starts_with("gate-held-"))
            })
            .count()
    }

    pub fn ca(&self) -> PathBuf {
        self.dir.path().join("ca.pem")
    }

    /// `openssl ts -reply`'s answer to `query` as the TSA section of `mode` (`ok`,
    /// `ess-sha1`, `reject`) gives it, without HTTP.
    pub fn reply(&self, mode: &str, query: &[u8]) -> Vec<u8> {
        static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        ts_reply(self.dir.path(), &format!("direct{n}"), mode, query)
    }
}

fn section_of(mode: &str) -> &'static str {
    match mode {
        "reject" => "tsa_reject",
        "ess-sha1" => "tsa_ess_sha1",
        _ => "tsa_ok",
    }
}

/// `openssl ts -reply` to `query` with the section for `mode`; `tag` names its files.
fn ts_reply(root: &Path, tag: &str, mode: &str, query: &[u8]) -> Vec<u8> {
    let (q, out) = (
        root.join(format!("q{tag}.tsq")),
        root.join(format!("r{tag}.tsr")),
    );
    std::fs::write(&q, query).unwrap();
    let (ok, msg) = run(Command::new("openssl").args([
        "ts",
        "-reply",
        "-config",
        s(&root.join("tsa.cnf")),
        "-section",
        section_of(mode),
        "-queryfile",
        s(&q),
        "-out",
        s(&out),
    ]));
    assert!(ok, "openssl ts -reply: {msg}");
    std::fs::read(&out).unwrap()
}

/// One HTTP exchange: the query to `openssl ts -reply`, tampered as the path asks.
fn answer(root: &Path, n: usize, mut stream: TcpStream) {
    let mut r = BufReader::new(stream.try_clone().unwrap());
    let mut line = String::new();
    r.read_line(&mut line).unwrap();
    let path = line.split(' ').nth(1).unwrap_or("/").to_string();
    let mut len = 0usize;
    loop {
        let mut h = String::new();
        r.read_line(&mut h).unwrap();
        if h.trim().is_empty() {
            break;
        }
        if let Some(v) = h.to_ascii_lowercase().strip_prefix("content-length:") {
            len = v.trim().parse().unwrap();
        }
    }
    let mut query = vec![0u8; len];
    r.read_exact(&mut query).unwrap();
    let mode = path.trim_start_matches('/');
    if mode == "silent" {
        std::thread::sleep(std::time::Duration::from_secs(30));
        return;
    }
    if mode == "slow" {
        std::thread::sleep(std::time::Duration::from_secs(2));
    }
    if mode == "gate" {
        let held = root.join(format!("gate-held-{n}"));
        std::fs::write(&held, b"").unwrap();
        let end = std::time::Instant::now() + std::time::Duration::from_secs(120);
        while !root.join("gate-open").exists() && std::time::Instant::now() < end {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        std::fs::remove_file(&held).unwrap();
    }
    // Every third exchange (by arrival) loses its connection halfway through the answer.
    let drop_now = mode == "drop" || (mode == "drop-every-3rd" && n.is_multiple_of(3));
    if mode == "wrong-imprint" {
        // The hash is the first 32-, 48- or 64-byte OCTET STRING of the query.
        let at = query
            .windows(2)
            .position(|w| w[0] == 0x04 && matches!(w[1], 0x20 | 0x30 | 0x40))
            .unwrap();
        query[at + 2] ^= 0x01;
    }
    let mut reply = ts_reply(root, &n.to_string(), mode, &query);
    if mode == "bad-signature" {
        // The token's last field is its signer's signature value.
        *reply.last_mut().unwrap() ^= 0x01;
    }
    let head = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: application/timestamp-reply\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        reply.len()
    );
    stream.write_all(head.as_bytes()).unwrap();
    if drop_now {
        let _ = stream.write_all(&reply[..reply.len() / 2]);
        let _ = stream.shutdown(std::net::Shutdown::Both);
        return;
    }
    stream.write_all(&reply).unwrap();
}

/// `openssl ts -verify` of a token over `data` (a signature value), against `ca`.
pub fn openssl_ts_verify(token: &[u8], data: &[u8], ca: &Path) -> (bool, String) {
    let d = tempfile::tempdir().expect("a temporary folder");
    let (t, f) = (d.path().join("token.der"), d.path().join("data.bin"));
    std::fs::write(&t, token).expect("write the token");
    std::fs::write(&f, data).expect("write the data");
    run(Command::new("openssl").args([
        "ts",
        "-verify",
        "-in",
        s(&t),
        "-token_in",
        "-data",
        s(&f),
        "-CAfile",
        s(ca),
    ]))
}
