//! git signs through `hsmc-gpg` (gpg.format openpgp, gpg.program `hsmc-gpg`, user.signingkey
//! the fingerprint `hsmc keys openpgp` printed), with the configuration lines of the book's
//! page (`docs/src/git-openpgp.md`), on SoftHSM2 and lunasim (built-in): `git commit -S` and
//! `git tag -s` succeed, stock `git verify-commit`/`git verify-tag` — the real gpg, whose
//! keyring holds only the exported certificate — accept them and reject a rewritten tag, and
//! the trail has each signature. A key ID no key has, a key that may not sign, a wrong PIN,
//! a payload over the limit and options gpg has but hsmc-gpg does not implement are refused
//! with nothing signed; a PIN is asked on the terminal when none is given.

use std::io::Write;

use super::*;

/// `hsmc-gpg`, built beside `hsmc`.
fn hsmc_gpg() -> PathBuf {
    testkit::hsmc_binary().with_file_name("hsmc-gpg")
}

/// The page's `git config` lines, as arguments of git.
fn the_pages_git_config() -> Vec<Vec<String>> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/src/git-openpgp.md");
    let md = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<Vec<String>> = md
        .lines()
        .map(str::trim)
        .filter_map(|l| l.strip_prefix("git config "))
        .map(|l| l.split_whitespace().map(String::from).collect())
        .collect();
    assert_eq!(
        lines.len(),
        3,
        "{}: the three git config lines",
        path.display()
    );
    lines
}

/// The environment hsmc-gpg takes its options from (git passes them on).
fn hsmc_env(h: &Hsmc, pin: Option<&str>) -> Vec<(String, String)> {
    let mut env: Vec<(String, String)> = vec![
        ("HSMC_DATA_DIR".into(), p(h.data.path())),
        ("HSMC_MODULE".into(), h.module.clone()),
        ("USER".into(), "ci-officer".into()),
    ];
    if let Some(pin) = pin {
        env.push(("HSMC_PIN".into(), pin.into()));
    }
    env.extend(h.env.iter().cloned());
    env
}

/// git in `repo` as [`git_in`] runs it, with `env` added.
fn git_with(repo: &Path, home: &Path, env: &[(String, String)], args: &[&str]) -> Output {
    let mut c = Command::new("git");
    c.args(args)
        .current_dir(repo)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", home)
        .env_remove("HSMC_PIN")
        .env_remove("GNUPGHOME")
        .stdin(Stdio::null());
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

/// hsmc-gpg run as git runs it, `payload` on its standard input.
fn hsmc_gpg_run(env: &[(String, String)], args: &[&str], payload: &[u8]) -> Output {
    let mut c = Command::new(hsmc_gpg());
    c.args(args)
        .env_remove("HSMC_PIN")
        .env_remove("LUNASIM_CONF")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        c.env(k, v);
    }
    let mut child = c.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let data = payload.to_vec();
    // hsmc-gpg stops reading past its limit: the rest meets a closed pipe.
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&data);
    });
    let o = child.wait_with_output().unwrap();
    writer.join().unwrap();
    o
}

/// The key `label` of `alg` and its certificate; gpg's keyring at `home/.gnupg` holds only
/// that, trusted. The fingerprint.
fn key_and_its_certificate(h: &Hsmc, pin: &str, alg: &str, label: &str, home: &Path) -> String {
    h.json(
        Some(pin),
        &["keys", "gen", "-a", alg, "-l", label, "--token"],
    );
    let cert = home.join(format!("{label}.asc"));
    let made = h.json(
        Some(pin),
        &[
            "keys",
            "openpgp",
            &format!("label:{label}"),
            "--uid",
            "Dev <dev@example.org>",
            "--out",
            &p(&cert),
        ],
    );
    let fpr = made["fingerprint"].as_str().unwrap().to_string();
    let gnupg = home.join(".gnupg");
    std::fs::create_dir_all(&gnupg).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&gnupg, std::fs::Permissions::from_mode(0o700)).unwrap();
    let gpg = |args: &[&str], input: Option<&str>| {
        let mut c = Command::new("gpg");
        c.arg("--homedir")
            .arg(&gnupg)
            .arg("--batch")
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = c.spawn().unwrap();
        let mut i = child.stdin.take().unwrap();
        i.write_all(input.unwrap_or_default().as_bytes()).unwrap();
        drop(i);
        ok(child.wait_with_output().unwrap())
    };
    gpg(&["--import", &p(&cert)], None);
    gpg(&["--import-ownertrust"], Some(&format!("{fpr}:6:\n")));
    fpr
}

/// The sign and sign.request records in the trail.
fn signatures_recorded(h: &Hsmc) -> usize {
    let tail = h.json(None, &["audit", "tail", "-n", "200"]);
    tail.as_array()
        .unwrap()
        .iter()
        .filter(|r| r["action"] == "sign" || r["action"] == "sign.request")
        .count()
}

#[test]
fn git_signs_commits_and_tags_through_hsmc_gpg() {
    let soft = TestToken::new(Backend::SoftHsm);
    let (on_soft, builtin) = (Hsmc::token(&soft), Hsmc::builtin());
    for (h, pin, alg) in [
        (&on_soft, testkit::USER_PIN, "ed25519"),
        (&builtin, console::builtin::USER_PIN, "ec-p256"),
    ] {
        git_signs_with_the_openpgp_key(h, pin, alg);
    }
}

/// A repository configured as the page says signs a commit and a tag with the key of `alg`;
/// stock git and gpg verify them; then the refusals.
fn git_signs_with_the_openpgp_key(h: &Hsmc, pin: &str, alg: &str) {
    let label = format!("gitpgp_{alg}");
    let dir = h.data.path().join(format!("git-openpgp-{alg}"));
    let repo = dir.join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    let fpr = key_and_its_certificate(h, pin, alg, &label, &dir);
    let env = hsmc_env(h, Some(pin));
    let git = |args: &[&str]| git_with(&repo, &dir, &env, args);
    ok(git(&["init", "-q", "-b", "main"]));
    ok(git(&["config", "user.name", "Dev"]));
    ok(git(&["config", "user.email", "dev@example.org"]));
    for line in the_pages_git_config() {
        // The page reads the fingerprint from `hsmc --json keys openpgp`; this key's is fpr.
        let line: Vec<String> = if line[0] == "user.signingkey" {
            vec![line[0].clone(), fpr.clone()]
        } else {
            line.into_iter()
                .map(|w| if w == "hsmc-gpg" { p(&hsmc_gpg()) } else { w })
                .collect()
        };
        let mut args = vec!["config"];
        args.extend(line.iter().map(String::as_str));
        ok(git(&args));
    }
    std::fs::write(repo.join("README"), "release notes\n").unwrap();
    ok(git(&["add", "README"]));
    ok(git(&["commit", "-q", "-S", "-m", "first, signed"]));
    ok(git(&["tag", "-s", "v1.0", "-m", "release 1.0"]));
    // Verification: no HSMC_* at all, the real gpg with the imported certificate.
    let vc = ok(git_in(&repo, &dir, &["verify-commit", "HEAD"]));
    let good = "Good signature from \"Dev <dev@example.org>\"";
    assert!(
        testkit::tools::text(&vc).contains(good),
        "{}",
        testkit::tools::text(&vc)
    );
    let vt = ok(git_in(&repo, &dir, &["verify-tag", "v1.0"]));
    assert!(
        testkit::tools::text(&vt).contains(good),
        "{}",
        testkit::tools::text(&vt)
    );
    assert!(
        testkit::tools::text(&vt).contains(&fpr),
        "{}",
        testkit::tools::text(&vt)
    );
    a_rewritten_tag_is_rejected(&repo, &dir, "-----BEGIN PGP SIGNATURE-----");
    each_git_signature_is_in_the_trail(h, &repo, &label, "openpgp");
    // The long key ID, 0x and lower case: the same key; the PIN from HSMC_PIN_FILE.
    let short = format!("0x{}", fpr[24..].to_ascii_lowercase());
    let pin_file = dir.join("pin");
    std::fs::write(&pin_file, format!("{pin}\n")).unwrap();
    let mut with_file = hsmc_env(h, None);
    with_file.push(("HSMC_PIN_FILE".into(), p(&pin_file)));
    let o = hsmc_gpg_run(&with_file, &["--status-fd=2", "-bsau", &short], b"tree 0\n");
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("\n[GNUPG:] SIG_CREATED D "),
        "{}",
        stderr(&o)
    );
    the_pin_is_asked_on_the_terminal(h, pin, &label, &fpr, &dir);
    refusals_sign_nothing(h, pin, &label, &fpr);
}

/// Each refusal: a message on standard error, a non-zero exit, no signature, nothing in
/// the trail.
fn refusals_sign_nothing(h: &Hsmc, pin: &str, label: &str, fpr: &str) {
    let before = signatures_recorded(h);
    let env = hsmc_env(h, Some(pin));
    let refused = |env: &[(String, String)], args: &[&str], payload: &[u8], says: &str| {
        let o = hsmc_gpg_run(env, args, payload);
        assert_ne!(code(&o), 0, "{args:?}");
        assert!(o.stdout.is_empty(), "{args:?}: {}", stdout(&o));
        assert!(stderr(&o).contains(says), "{args:?}: {}", stderr(&o));
        assert!(!stderr(&o).contains("SIG_CREATED"), "{}", stderr(&o));
    };
    let with = |key: &str| vec!["--status-fd=2".to_string(), "-bsau".into(), key.into()];
    for (key, says) in [
        (
            "0123456789ABCDEF",
            "No key on this partition has the OpenPGP fingerprint or key ID 0123456789ABCDEF",
        ),
        ("Dev <dev@example.org>", "is not an OpenPGP fingerprint"),
    ] {
        let a = with(key);
        refused(
            &env,
            &a.iter().map(String::as_str).collect::<Vec<_>>(),
            b"tree 0\n",
            says,
        );
    }
    let sign = with(fpr);
    let sign: Vec<&str> = sign.iter().map(String::as_str).collect();
    let wrong = hsmc_env(h, Some("wrong-pin-0000"));
    refused(&wrong, &sign, b"tree 0\n", "PIN");
    let big = vec![b'x'; (64 << 20) + 1];
    refused(&env, &sign, &big, "larger than 64 MiB");
    refused(
        &env,
        &[&sign[..], &["--clearsign"]].concat(),
        b"",
        "--clearsign",
    );
    refused(&env, &["--list-keys"], b"", "--list-keys");
    // No PIN anywhere and no terminal to ask on (setsid: no controlling terminal).
    let o = Command::new("setsid")
        .arg("-w")
        .arg(hsmc_gpg())
        .args(&sign)
        .envs(hsmc_env(h, None))
        .env_remove("HSMC_PIN")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_ne!(code(&o), 0);
    assert!(stderr(&o).contains("needs a PIN"), "{}", stderr(&o));
    // The key's CKA_SIGN set false: its fingerprint still names it, and it is refused.
    let o = h.run(
        Some(pin),
        &[
            "keys",
            "set",
            &format!("label:{label}"),
            "--set",
            "sign=false",
        ],
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    refused(&env, &sign, b"tree 0\n", "may not sign");
    assert_eq!(signatures_recorded(h), before, "nothing recorded as signed");
}

/// No HSMC_PIN, no file, the payload on standard input, a terminal (a pseudo-terminal made
/// by Python's pty): the PIN is asked there, and the signature verifies with sq, and with
/// gpg through hsmc-gpg even when hsmc-gpg is the first `gpg` on PATH.
fn the_pin_is_asked_on_the_terminal(h: &Hsmc, pin: &str, label: &str, fpr: &str, dir: &Path) {
    let payload = dir.join("tty-payload");
    std::fs::write(&payload, "tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\n").unwrap();
    let sig = dir.join("tty-payload.asc");
    let script = r#"
import os, pty, sys, termios, time
hsmc_gpg, fpr, payload, sig, pin = sys.argv[1:]
pid, fd = pty.fork()
if pid == 0:
    os.dup2(os.open(payload, os.O_RDONLY), 0)
    os.dup2(os.open(sig, os.O_WRONLY | os.O_CREAT | os.O_TRUNC), 1)
    os.execv(hsmc_gpg, [hsmc_gpg, "--status-fd=2", "-bsau", fpr])
seen = b""
while b"PIN" not in seen:
    seen += os.read(fd, 1024)
# Answer once the prompt has turned echo off (the master reads the terminal's settings):
# typed earlier, the line discipline would echo the PIN as it would a person's keys.
deadline = time.time() + 30
while termios.tcgetattr(fd)[3] & termios.ECHO and time.time() < deadline:
    time.sleep(0.01)
os.write(fd, pin.encode() + b"\n")
rest = b""
try:
    while True:
        b = os.read(fd, 1024)
        if not b:
            break
        rest += b
except OSError:
    pass
_, status = os.waitpid(pid, 0)
sys.stdout.write((seen + rest).decode(errors="replace"))
sys.exit(os.waitstatus_to_exitcode(status))
"#;
    let o = Command::new(testkit::python())
        .arg("-c")
        .arg(script)
        .arg(hsmc_gpg())
        .arg(fpr)
        .arg(&payload)
        .arg(&sig)
        .arg(pin)
        .envs(hsmc_env(h, None))
        .env_remove("HSMC_PIN")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    assert!(stdout(&o).contains("PIN for"), "{}", stdout(&o));
    assert!(
        !stdout(&o).contains(pin),
        "the PIN is not echoed: {}",
        stdout(&o)
    );
    assert!(
        stdout(&o).contains("[GNUPG:] SIG_CREATED D "),
        "{}",
        stdout(&o)
    );
    assert!(std::fs::read_to_string(&sig)
        .unwrap()
        .ends_with("-----END PGP SIGNATURE-----\n"));
    // Sequoia's sq checks it against the certificate file alone.
    let cert = dir.join(format!("{label}.asc"));
    let v = Command::new("sq")
        .args(["verify", "--detached"])
        .arg(&sig)
        .arg("--signer-cert")
        .arg(&cert)
        .arg(&payload)
        .output()
        .unwrap();
    assert!(v.status.success(), "sq: {}", stderr(&v));
    // Verification through hsmc-gpg, installed as `gpg` first on PATH too: the real gpg runs.
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let _ = std::fs::remove_file(bin.join("gpg"));
    std::os::unix::fs::symlink(hsmc_gpg(), bin.join("gpg")).unwrap();
    let path = format!("{}:{}", p(&bin), std::env::var("PATH").unwrap_or_default());
    let v = Command::new(bin.join("gpg"))
        .args(["--status-fd=1", "--verify"])
        .arg(&sig)
        .arg("-")
        .env("PATH", path)
        .env("HOME", dir)
        .env_remove("GNUPGHOME")
        .env_remove("HSMC_GPG")
        .stdin(Stdio::from(std::fs::File::open(&payload).unwrap()))
        .output()
        .unwrap();
    assert!(v.status.success(), "{}", stderr(&v));
    assert!(
        stdout(&v).contains(&format!("[GNUPG:] VALIDSIG {fpr}")),
        "{}",
        stdout(&v)
    );
    std::fs::write(&payload, "tree 0\n").unwrap();
    let v = Command::new(hsmc_gpg())
        .args(["--verify"])
        .arg(&sig)
        .arg(&payload)
        .env("HOME", dir)
        .env_remove("GNUPGHOME")
        .output()
        .unwrap();
    assert!(!v.status.success(), "another payload: {}", stderr(&v));
    assert!(stderr(&v).contains("BAD signature"), "{}", stderr(&v));
}
