//! An apt repository signed through `hsmc` on lunasim, checked by Debian 12's apt itself:
//! the commands and configuration lines of the book's apt page (`docs/src/apt.md`) are read
//! from it and run — a flat `file:` repository built with `dpkg-deb` and `apt-ftparchive`,
//! its `Release` signed as `InRelease` and `Release.gpg` — then `apt-get update`, with a
//! private configuration and state in a temporary folder and the exported certificate as
//! `signed-by`, accepts each signature alone and refuses a text changed after signing.

use std::collections::BTreeMap;

use super::*;

/// What the page names, replaced by the test's own paths.
const PAGE_REPO: &str = "/srv/apt";
const PAGE_KEYRING: &str = "/etc/apt/keyrings/archive-keyring.asc";
const PAGE_KEY: &str = "label:archive_ed25519";

/// The apt page's fenced blocks: shell commands, and the two source configurations.
struct AptPage {
    /// The shell lines in order (`cd` included).
    shell: Vec<String>,
    /// `deb [signed-by=…] URI ./`
    one_line: String,
    /// The deb822 `.sources` stanza.
    deb822: String,
}

impl AptPage {
    fn read() -> AptPage {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/src/apt.md");
        let md = std::fs::read_to_string(&path).unwrap();
        let mut blocks: Vec<(String, Vec<String>)> = Vec::new();
        let mut open = false;
        for line in md.lines().map(str::trim) {
            if let Some(info) = line.strip_prefix("```") {
                if !open {
                    blocks.push((info.to_string(), Vec::new()));
                }
                open = !open;
            } else if open {
                blocks.last_mut().unwrap().1.push(line.to_string());
            }
        }
        let text = |first: &str| -> String {
            blocks
                .iter()
                .find(|(info, l)| info == "text" && l[0].starts_with(first))
                .unwrap_or_else(|| panic!("{}: no block starting {first:?}", path.display()))
                .1
                .join("\n")
        };
        AptPage {
            shell: blocks
                .iter()
                .filter(|(info, _)| info == "sh")
                .flat_map(|(_, l)| l.clone())
                .collect(),
            one_line: text("deb ["),
            deb822: text("Types:"),
        }
    }
}

/// A shell line's words: spaces split, double quotes group (as the page writes them).
fn words(line: &str) -> Vec<String> {
    let (mut out, mut cur, mut quoted) = (Vec::new(), String::new(), false);
    for c in line.chars() {
        match c {
            '"' => quoted = !quoted,
            ' ' if !quoted => {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
            }
            c => cur.push(c),
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// Run the page's shell lines as an officer would: from the first `apt-ftparchive` line on in
/// the repository (the page publishes "in the repository's folder"), with the keyring where
/// step 1 wrote it; `hsmc` as this test's hsmc (its partition, the key `label`), anything
/// else with `sh -c`.
fn run_the_pages_commands(h: &Hsmc, page: &AptPage, work: &Path, repo: &Path, label: &str) {
    let mut cwd = work.to_path_buf();
    for line in &page.shell {
        let mut line = line.replace(PAGE_KEY, &format!("label:{label}"));
        if line.starts_with("apt-ftparchive") {
            cwd = repo.to_path_buf();
        }
        if line.starts_with("hsmc verify") {
            line = line.replace("archive-keyring.asc", &p(&work.join("archive-keyring.asc")));
        }
        if let Some(rest) = line.strip_prefix("hsmc ") {
            let args = words(rest);
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let o = h
                .cmd(&args)
                .current_dir(&cwd)
                .env("HSMC_PIN", console::builtin::USER_PIN)
                .output()
                .unwrap();
            assert!(o.status.success(), "{line}: {}{}", stdout(&o), stderr(&o));
        } else {
            let o = Command::new("sh")
                .args(["-c", &line])
                .current_dir(&cwd)
                .output()
                .unwrap();
            assert!(o.status.success(), "{line}: {}", stderr(&o));
        }
    }
}

/// A flat repository with one package, `hello-hsm` 1.0, built with `dpkg-deb`.
fn repository_with_one_package(repo: &Path) {
    let pkg = repo.parent().unwrap().join("hello-hsm");
    std::fs::create_dir_all(pkg.join("DEBIAN")).unwrap();
    std::fs::create_dir_all(repo).unwrap();
    std::fs::write(
        pkg.join("DEBIAN/control"),
        "Package: hello-hsm\nVersion: 1.0\nArchitecture: all\nMaintainer: Archive <archive@example.org>\nDescription: a package of the signed test repository\n",
    )
    .unwrap();
    let o = Command::new("dpkg-deb")
        .args(["--root-owner-group", "--build"])
        .arg(&pkg)
        .arg(repo.join("hello-hsm_1.0_all.deb"))
        .output()
        .unwrap();
    assert!(o.status.success(), "dpkg-deb: {}", stderr(&o));
}

/// apt-get and apt-cache with their own configuration, lists and cache in a temporary
/// folder: no system source, keyring, state or lock is read or touched, no root needed.
struct Apt {
    root: tempfile::TempDir,
}

impl Apt {
    fn new() -> Apt {
        Apt {
            root: tempfile::tempdir().unwrap(),
        }
    }

    fn dir(&self, name: &str) -> PathBuf {
        self.root.path().join(name)
    }

    fn options(&self) -> Vec<String> {
        let mut o = BTreeMap::new();
        for (k, v) in [
            ("Dir::Etc::sourcelist", self.dir("sources.list")),
            ("Dir::Etc::sourceparts", self.dir("sources.list.d")),
            ("Dir::Etc::trusted", self.dir("trusted.gpg")),
            ("Dir::Etc::trustedparts", self.dir("trusted.gpg.d")),
            ("Dir::Etc::preferences", self.dir("preferences")),
            ("Dir::Etc::preferencesparts", self.dir("preferences.d")),
            ("Dir::State", self.dir("state")),
            ("Dir::State::status", self.dir("status")),
            ("Dir::Cache", self.dir("cache")),
        ] {
            o.insert(k, v.display().to_string());
        }
        o.insert("Debug::NoLocking", "1".into());
        // As root apt would fetch as _apt, who cannot read a test's temporary folder.
        o.insert("APT::Sandbox::User", "root".into());
        o.into_iter()
            .flat_map(|(k, v)| ["-o".to_string(), format!("{k}={v}")])
            .collect()
    }

    /// `apt-get update` from fresh state with this one source: `one_line` (sources.list) or
    /// a deb822 stanza (sources.list.d/archive.sources). Its success and what it said.
    fn update(&self, one_line: Option<&str>, deb822: Option<&str>) -> (bool, String) {
        for d in [
            "state",
            "cache",
            "sources.list.d",
            "trusted.gpg.d",
            "preferences.d",
        ] {
            let _ = std::fs::remove_dir_all(self.dir(d));
            std::fs::create_dir_all(self.dir(d)).unwrap();
        }
        std::fs::create_dir_all(self.dir("state/lists/partial")).unwrap();
        std::fs::create_dir_all(self.dir("cache/archives/partial")).unwrap();
        std::fs::write(self.dir("status"), "").unwrap();
        std::fs::write(
            self.dir("sources.list"),
            one_line.map(|l| format!("{l}\n")).unwrap_or_default(),
        )
        .unwrap();
        if let Some(stanza) = deb822 {
            std::fs::write(
                self.dir("sources.list.d/archive.sources"),
                format!("{stanza}\n"),
            )
            .unwrap();
        }
        let o = Command::new("apt-get")
            .args(self.options())
            .arg("update")
            .output()
            .unwrap();
        (o.status.success(), format!("{}{}", stdout(&o), stderr(&o)))
    }

    /// The candidate version apt would install of `package`, if any.
    fn candidate(&self, package: &str) -> Option<String> {
        let o = Command::new("apt-cache")
            .args(self.options())
            .args(["policy", package])
            .output()
            .unwrap();
        stdout(&o)
            .lines()
            .find_map(|l| l.trim().strip_prefix("Candidate: ").map(str::to_string))
            .filter(|v| v != "(none)")
    }
}

/// The page's source lines with the test's repository and keyring.
fn sources(page: &AptPage, repo: &Path, keyring: &Path) -> (String, String) {
    let fill = |s: &str| {
        s.replace(PAGE_KEYRING, &p(keyring))
            .replace(PAGE_REPO, &p(repo))
    };
    (fill(&page.one_line), fill(&page.deb822))
}

/// `gpg --list-packets`: the digest algorithm (RFC 9580 §9.5 ID) of every signature packet.
fn signature_digests(file: &Path) -> Vec<u32> {
    let home = tempfile::tempdir().unwrap();
    let o = Command::new("gpg")
        .args(["--batch", "--homedir"])
        .arg(home.path())
        .arg("--list-packets")
        .arg(file)
        .output()
        .unwrap();
    assert!(o.status.success(), "gpg --list-packets: {}", stderr(&o));
    let text = stdout(&o);
    let sigs = text.matches(":signature packet:").count();
    let digests: Vec<u32> = text
        .lines()
        .filter_map(|l| l.trim().strip_prefix("digest algo "))
        .map(|l| l.split(',').next().unwrap().trim().parse().unwrap())
        .collect();
    assert_eq!(digests.len(), sigs, "{text}");
    digests
}

/// Move `name` out of the repository (into `aside`) and back.
fn aside(repo: &Path, aside: &Path, name: &str) {
    std::fs::rename(repo.join(name), aside.join(name)).unwrap();
}
fn back(repo: &Path, aside: &Path, name: &str) {
    std::fs::rename(aside.join(name), repo.join(name)).unwrap();
}

/// Replace `from` by `to` in a file (a text changed after it was signed).
fn edit(file: &Path, from: &str, to: &str) -> String {
    let before = std::fs::read_to_string(file).unwrap();
    assert!(before.contains(from), "{from:?} in {}", file.display());
    std::fs::write(file, before.replacen(from, to, 1)).unwrap();
    before
}

#[test]
fn an_apt_repository_signed_on_the_hsm_is_what_apt_accepts() {
    let h = Hsmc::builtin();
    let pin = Some(console::builtin::USER_PIN);
    h.gen_token_key(pin, "ed25519", "archive_ed25519");
    let work = h.data.path().join("apt-work");
    let repo = h.data.path().join("apt-repo");
    std::fs::create_dir_all(&work).unwrap();
    repository_with_one_package(&repo);
    let page = AptPage::read();
    run_the_pages_commands(&h, &page, &work, &repo, "archive_ed25519");

    let keyring = work.join("archive-keyring.asc");
    let (inrelease, detached) = (repo.join("InRelease"), repo.join("Release.gpg"));
    let text = std::fs::read_to_string(&inrelease).unwrap();
    assert!(
        text.starts_with("-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA512\n\n"),
        "{text}"
    );
    let release = std::fs::read_to_string(repo.join("Release")).unwrap();
    assert!(
        text.contains(&release),
        "InRelease carries Release as it is"
    );
    assert!(std::fs::read_to_string(&detached)
        .unwrap()
        .starts_with("-----BEGIN PGP SIGNATURE-----\n"));
    // SHA-512 throughout: the certificate's binding (newer apt verifiers refuse SHA-1) and
    // both signatures.
    let digests = signature_digests(&keyring);
    assert!(
        !digests.is_empty() && digests.iter().all(|d| *d == 10),
        "{digests:?}"
    );
    assert_eq!(signature_digests(&detached), [10]);

    apt_accepts_each_signature_alone_and_refuses_changes(&page, &repo, &keyring);
    hsmc_verify_agrees(&h, &repo, &keyring);
    the_signatures_are_in_the_trail(&h);
    text_only_and_apt_names_are_refused_by_name(&h, pin, &repo);
    a_p256_key_binds_with_sha256_and_apt_accepts_it(&h, pin, &repo);
}

/// apt 2.6 with the page's sources: `InRelease` alone (one-line source), `Release` and
/// `Release.gpg` alone (deb822 source), then the package listed; a changed `InRelease`, a
/// changed `Release`, a binary `Release.gpg` refused, no package listed.
fn apt_accepts_each_signature_alone_and_refuses_changes(
    page: &AptPage,
    repo: &Path,
    keyring: &Path,
) {
    let apt = Apt::new();
    let (one_line, deb822) = sources(page, repo, keyring);
    let moved = tempfile::tempdir().unwrap();
    let moved = moved.path();
    let accepted = |one: Option<&str>, stanza: Option<&str>, which: &str| {
        let (ok, said) = apt.update(one, stanza);
        assert!(ok && said.contains(which), "apt-get update: {said}");
        assert!(!said.contains("W:") && !said.contains("E:"), "{said}");
        assert_eq!(apt.candidate("hello-hsm").as_deref(), Some("1.0"));
    };
    // apt's refusal: any of `why` in what it said, and no package listed.
    let refused = |one: Option<&str>, stanza: Option<&str>, why: &[&str]| {
        let (ok, said) = apt.update(one, stanza);
        assert!(
            !ok && why.iter().any(|w| said.contains(w)),
            "apt-get update did not refuse as {why:?}: {said}"
        );
        assert_eq!(apt.candidate("hello-hsm"), None, "nothing listed");
    };

    aside(repo, moved, "Release.gpg");
    accepted(Some(&one_line), None, "InRelease [");
    let signed = edit(&repo.join("InRelease"), "Packages\n", "Packages.bad\n");
    refused(Some(&one_line), None, &["BADSIG"]);
    std::fs::write(repo.join("InRelease"), signed).unwrap();
    back(repo, moved, "Release.gpg");

    aside(repo, moved, "InRelease");
    accepted(None, Some(&deb822), "Release.gpg [");
    let signed = edit(&repo.join("Release"), "Packages\n", "Packages.bad\n");
    refused(None, Some(&deb822), &["BADSIG"]);
    std::fs::write(repo.join("Release"), signed).unwrap();
    // The same signature in binary: gpgv reads it, apt 2.6 does not.
    let armored = std::fs::read(repo.join("Release.gpg")).unwrap();
    let home = tempfile::tempdir().unwrap();
    let o = Command::new("gpg")
        .args(["--batch", "--yes", "--homedir"])
        .arg(home.path())
        .args(["--dearmor", "--output"])
        .arg(moved.join("Release.bin"))
        .arg(repo.join("Release.gpg"))
        .output()
        .unwrap();
    assert!(o.status.success(), "gpg --dearmor: {}", stderr(&o));
    std::fs::rename(moved.join("Release.bin"), repo.join("Release.gpg")).unwrap();
    // apt 2.6 names a binary signature in the old packet format (gpg's) "in unsupported
    // binary format"; one in the new format finds no armor to read: NODATA.
    refused(
        None,
        Some(&deb822),
        &["unsupported binary format", "got 'NODATA'"],
    );
    std::fs::write(repo.join("Release.gpg"), armored).unwrap();
    back(repo, moved, "InRelease");
    // Both, as published: apt takes InRelease.
    accepted(Some(&one_line), None, "InRelease [");
}

/// `hsmc verify` accepts both signatures of `Release` and neither once it changed.
fn hsmc_verify_agrees(h: &Hsmc, repo: &Path, keyring: &Path) {
    let release = repo.join("Release");
    for sig in ["InRelease", "Release.gpg"] {
        let v = h.json(
            None,
            &[
                "verify",
                &p(&release),
                "--sig",
                &p(&repo.join(sig)),
                "--pub",
                &p(keyring),
            ],
        );
        assert_eq!(v["valid"], true, "{sig}: {v}");
    }
    let signed = edit(&release, "Packages\n", "Packages.bad\n");
    for sig in ["InRelease", "Release.gpg"] {
        let o = h.run(
            None,
            &[
                "verify",
                &p(&release),
                "--sig",
                &p(&repo.join(sig)),
                "--pub",
                &p(keyring),
            ],
        );
        assert_eq!(code(&o), 3, "{sig} over a changed Release: {}", stdout(&o));
    }
    std::fs::write(&release, signed).unwrap();
}

/// One `sign` record for `Release`, naming both outputs.
fn the_signatures_are_in_the_trail(h: &Hsmc) {
    let tail = h.json(None, &["audit", "tail", "-n", "50"]);
    let signs: Vec<&Value> = tail
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["action"] == "sign" && r["resource_id"] == "Release")
        .collect();
    assert_eq!(signs.len(), 1, "{tail}");
    let meta = signs[0]["metadata"].as_str().unwrap();
    assert!(
        meta.contains("InRelease") && meta.contains("Release.gpg"),
        "{meta}"
    );
}

/// Refused by name before anything is signed, exit 1, nothing written, the file's `sign`
/// record failed: a binary file, CRLF line endings, a trailing space (cleartext needs text it
/// covers exactly), a binary `Release.gpg` (apt reads it armored only). In Chinese too.
fn text_only_and_apt_names_are_refused_by_name(h: &Hsmc, pin: Option<&str>, repo: &Path) {
    let dir = repo.parent().unwrap().join("refused");
    std::fs::create_dir_all(dir.join("other")).unwrap();
    let deb = repo.join("hello-hsm_1.0_all.deb");
    let crlf = dir.join("notes.txt");
    std::fs::write(&crlf, "first\r\nsecond\r\n").unwrap();
    let spaced = dir.join("CHANGES");
    std::fs::write(&spaced, "1.0\n- first release \n").unwrap();
    let release = dir.join("other/Release");
    std::fs::copy(repo.join("Release"), &release).unwrap();
    let cases: [(&Path, &[&str], &str); 4] = [
        (
            &deb,
            &["--clearsign"],
            "a cleartext signature is made over lines of text",
        ),
        (
            &crlf,
            &["--clearsign"],
            "carriage return at the end of line 1",
        ),
        (
            &spaced,
            &["--format", "openpgp", "--clearsign"],
            "space or tab at the end of line 2",
        ),
        (
            &release,
            &["--format", "openpgp", "--openpgp-binary"],
            "apt reads only ASCII-armored",
        ),
    ];
    for (file, flags, why) in cases {
        let mut args = vec!["--json", "sign", "--key", "label:archive_ed25519"];
        args.extend_from_slice(flags);
        let path = p(file);
        args.push(&path);
        let o = h.run(pin, &args);
        assert_eq!(code(&o), 1, "{path}: {}{}", stdout(&o), stderr(&o));
        let r: Value = serde_json::from_slice(&o.stdout).unwrap();
        let said = r["files"][0]["error"]["message"]
            .as_str()
            .unwrap_or_default();
        assert!(said.starts_with(&path) && said.contains(why), "{said}");
        assert_eq!(r["signatures_made"], 0, "{r}");
        let mut outputs: Vec<PathBuf> = [".asc", ".gpg", ".clearsigned"]
            .iter()
            .map(|x| PathBuf::from(format!("{path}{x}")))
            .collect();
        if file == release.as_path() {
            outputs.push(file.with_file_name("InRelease"));
        }
        let written: Vec<_> = outputs.iter().filter(|o| o.exists()).collect();
        assert!(written.is_empty(), "{path}: {written:?}");
    }
    let tail = h.json(None, &["audit", "tail", "-n", "50"]);
    for name in ["hello-hsm_1.0_all.deb", "notes.txt", "CHANGES", "Release"] {
        let failed = tail
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["action"] == "sign" && r["resource_id"] == name)
            .filter(|r| r["status"] == "failure")
            .count();
        assert_eq!(failed, 1, "the failed sign record of {name}: {tail}");
    }
    let o = h.run(
        pin,
        &[
            "--lang",
            "zh-Hant",
            "sign",
            "--key",
            "label:archive_ed25519",
            "--clearsign",
            &p(&crlf),
        ],
    );
    assert_eq!(code(&o), 1);
    assert!(
        stdout(&o).contains("第 1 行結尾有歸位字元"),
        "{}",
        stdout(&o)
    );
}

/// A P-256 key's certificate binds with SHA-256 and its InRelease says `Hash: SHA256`;
/// apt accepts it (and it alone: the Ed25519 key's signature is no longer there).
fn a_p256_key_binds_with_sha256_and_apt_accepts_it(h: &Hsmc, pin: Option<&str>, repo: &Path) {
    h.gen_token_key(pin, "ec-p256", "archive_p256");
    let keyring = repo.parent().unwrap().join("p256-keyring.asc");
    h.json(
        pin,
        &[
            "keys",
            "openpgp",
            "label:archive_p256",
            "--uid",
            "Archive P-256 <archive@example.org>",
            "--out",
            &p(&keyring),
        ],
    );
    let digests = signature_digests(&keyring);
    assert!(
        !digests.is_empty() && digests.iter().all(|d| *d == 8),
        "{digests:?}"
    );
    // The old signatures are never written over: refused before anything is signed.
    let release = p(&repo.join("Release"));
    let args = [
        "sign",
        release.as_str(),
        "--key",
        "label:archive_p256",
        "--format",
        "openpgp",
        "--clearsign",
    ];
    let before = std::fs::read(repo.join("InRelease")).unwrap();
    let o = h.run(pin, &args);
    assert_eq!(code(&o), 1, "{}", stdout(&o));
    assert!(
        stdout(&o).contains("already exists; nothing was overwritten"),
        "{}",
        stdout(&o)
    );
    assert_eq!(std::fs::read(repo.join("InRelease")).unwrap(), before);
    for old in ["InRelease", "Release.gpg"] {
        std::fs::remove_file(repo.join(old)).unwrap();
    }
    let r = h.json(pin, &args);
    assert_eq!(r["signatures_made"], 2, "{r}");
    let text = std::fs::read_to_string(repo.join("InRelease")).unwrap();
    assert!(
        text.starts_with("-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA256\n"),
        "{text}"
    );
    let apt = Apt::new();
    let line = format!("deb [signed-by={}] file:{} ./", p(&keyring), p(repo));
    let (ok, said) = apt.update(Some(&line), None);
    assert!(ok && said.contains("InRelease ["), "{said}");
    assert_eq!(apt.candidate("hello-hsm").as_deref(), Some("1.0"));
}
