//! Subcommand handlers: open the console, select the partition, log in when needed, call
//! one service, print its result.

use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use clap::CommandFactory;
use console::views::{GenerateRequest, UserKind};
use console::{ApiError, ApiResult, Console, ConsoleConfig, ErrorCode, Partition};
use hsm::algo::{HssParams, KeySpec, LmotsType, LmsType};
use hsm::pubkey::PublicKeyFormat;

use crate::args::*;
use crate::output::{self, table, yes_no};
use crate::pin;

/// Run one command; the exit code on success (3 for a failed verification).
pub async fn run(cli: Cli) -> ApiResult<u8> {
    let g = &cli.global;
    match &cli.command {
        Command::Completions { shell } => {
            let mut cmd = Cli::command();
            clap_complete::generate(*shell, &mut cmd, "hsmc", &mut std::io::stdout());
            return Ok(0);
        }
        Command::Man => {
            let man = clap_mangen::Man::new(Cli::command());
            let mut buf = Vec::new();
            man.render(&mut buf)
                .map_err(|e| ApiError::io("cannot render the man page", &e))?;
            std::io::stdout()
                .write_all(&buf)
                .map_err(|e| ApiError::io("cannot write", &e))?;
            return Ok(0);
        }
        _ => {}
    }
    let c = open(g).await?;
    let r = dispatch(&c, &cli).await;
    c.close().await;
    r
}

async fn open(g: &Global) -> ApiResult<Arc<Console>> {
    let mut cfg = ConsoleConfig::new(
        g.data_dir
            .clone()
            .unwrap_or_else(ConsoleConfig::default_data_dir),
    );
    cfg.settings_path = g.config.clone();
    cfg.audit_location = g.audit_db.clone();
    cfg.builtin = g.module == "builtin";
    cfg.load_saved_modules = false;
    if let Some(ctx) = cfg.context.actor_id.as_mut() {
        ctx.push_str(" (hsmc)");
    }
    let c = Console::open(cfg).await?;
    if g.module == "builtin" && !c.app_info().builtin_available {
        return Err(ApiError::new(
            ErrorCode::HsmUnavailable,
            "The built-in partition is not available.",
        )
        .details(c.app_info().builtin_note.unwrap_or_default())
        .suggest("Build it (make run) or choose a module with --module."));
    }
    Ok(c)
}

/// `--module`: `builtin`, a path, a module ID, or part of a remembered module's file name.
fn module_arg(c: &Console, g: &Global) -> ApiResult<String> {
    let m = g.module.trim();
    if m == "builtin" || m.starts_with('/') || m.starts_with("m-") {
        return Ok(m.to_string());
    }
    let matches: Vec<String> = c
        .settings()
        .modules
        .into_iter()
        .filter(|p| {
            PathBuf::from(p)
                .file_name()
                .map(|f| {
                    f.to_string_lossy()
                        .to_lowercase()
                        .contains(&m.to_lowercase())
                })
                .unwrap_or(false)
        })
        .collect();
    match matches.as_slice() {
        [one] => Ok(one.clone()),
        [] => Err(
            ApiError::invalid(format!("No remembered module is called '{m}'."))
                .suggest("Give the library's full path, or `builtin`."),
        ),
        _ => Err(ApiError::invalid(format!(
            "'{m}' matches several modules: {}",
            matches.join(", ")
        ))),
    }
}

pub(crate) async fn partition(c: &Console, g: &Global) -> ApiResult<Arc<Partition>> {
    let m = module_arg(c, g)?;
    builtin_check(c, &m)?;
    c.select_partition(&m, g.slot, g.token_label.as_deref())
        .await
}

fn builtin_check(c: &Console, module: &str) -> ApiResult<()> {
    if module == "builtin" && !c.app_info().builtin_available {
        return Err(ApiError::new(
            ErrorCode::HsmUnavailable,
            "The built-in partition is not available.",
        )
        .details(c.app_info().builtin_note.unwrap_or_default())
        .suggest("Build it (make run) or choose a module with --module."));
    }
    Ok(())
}

/// Log in when a PIN is available (or always, prompting, when `required`).
pub(crate) async fn login(
    c: &Console,
    g: &Global,
    p: &Partition,
    required: bool,
) -> ApiResult<bool> {
    let user = if g.so { UserKind::So } else { UserKind::User };
    let prompt = format!(
        "PIN for {} ({}): ",
        p.label,
        if g.so { "security officer" } else { "user" }
    );
    match pin::get(g, required, &prompt)? {
        Some(pin) => {
            c.login(&p.id, user, pin).await?;
            Ok(true)
        }
        None if required => Err(ApiError::invalid("This command needs a PIN.").suggest(
            "Set HSMC_PIN, or use --pin-file / --pin-fd, or run it on a terminal to be asked.",
        )),
        None => Ok(false),
    }
}

async fn dispatch(c: &Console, cli: &Cli) -> ApiResult<u8> {
    let g = &cli.global;
    match &cli.command {
        Command::Info => {
            let p = partition(c, g).await?;
            let m = c
                .list_modules()
                .into_iter()
                .find(|m| m.id == p.module.id)
                .expect("loaded");
            if g.json {
                output::json(&serde_json::json!({ "module": m, "app": c.app_info() }));
            } else {
                println!("module        {}", m.path);
                println!("manufacturer  {}", m.manufacturer);
                println!(
                    "library       {} {}",
                    m.library_description, m.library_version
                );
                println!("cryptoki      {} via {}", m.cryptoki_version, m.interface);
                println!("family        {}", m.family);
                if !m.vendor_functions.is_empty() {
                    println!("Luna calls    {}", m.vendor_functions.join(", "));
                }
                if m.builtin {
                    println!("note          software emulator (lunasim) - not for production keys");
                }
            }
        }
        Command::Slots => {
            let m = module_arg(c, g)?;
            builtin_check(c, &m)?;
            let module_id = c.module_for(&m).await?.id.clone();
            let slots = c.slots(&module_id).await?;
            if g.json {
                output::json(&slots);
            } else {
                let rows: Vec<Vec<String>> = slots
                    .iter()
                    .map(|s| {
                        let t = s.token.as_ref();
                        let mut flags = Vec::new();
                        if let Some(t) = t {
                            if t.user_pin_locked {
                                flags.push("USER PIN LOCKED");
                            } else if t.user_pin_final_try {
                                flags.push("user PIN: final try");
                            } else if t.user_pin_count_low {
                                flags.push("user PIN: count low");
                            }
                            if t.so_pin_locked {
                                flags.push("SO PIN LOCKED");
                            }
                            if !t.initialized {
                                flags.push("not initialized");
                            }
                        }
                        vec![
                            s.slot_id.to_string(),
                            t.map(|t| t.label.clone())
                                .unwrap_or_else(|| "(no token)".into()),
                            t.map(|t| t.serial.clone()).unwrap_or_default(),
                            t.map(|t| t.model.clone()).unwrap_or_default(),
                            flags.join(", "),
                        ]
                    })
                    .collect();
                table(&["SLOT", "TOKEN", "SERIAL", "MODEL", "FLAGS"], &rows);
            }
        }
        Command::Mechanisms => {
            let p = partition(c, g).await?;
            let ms = c.mechanisms(&p.id).await?;
            if g.json {
                output::json(&ms);
            } else {
                let rows: Vec<Vec<String>> = ms
                    .iter()
                    .map(|m| {
                        vec![
                            m.hex.clone(),
                            m.name.clone().unwrap_or_else(|| "(unnamed)".into()),
                            format!("{}..{}", m.min_key_size, m.max_key_size),
                            m.flags.join(" "),
                        ]
                    })
                    .collect();
                table(&["CODE", "NAME", "KEY SIZES", "FLAGS"], &rows);
            }
        }
        Command::Keys(k) => return keys(c, g, k).await,
        Command::Sign(a) => return crate::signcmd::sign(c, g, a).await,
        Command::Verify(a) => return crate::signcmd::verify(c, g, a).await,
        Command::Probe(a) => return crate::probecmd::probe(c, g, a).await,
        Command::Hss => {
            let p = partition(c, g).await?;
            login(c, g, &p, false).await?;
            let keys = c.hss_keys().await?;
            if g.json {
                output::json(&keys);
            } else if keys.is_empty() {
                println!("No HSS keys visible. Log in (HSMC_PIN) to see private keys, or generate one with `hsmc keys gen -a hss`.");
            } else {
                let rows: Vec<Vec<String>> = keys
                    .iter()
                    .map(|k| {
                        vec![
                            k.label.clone(),
                            k.algorithm.clone(),
                            k.remaining
                                .map(|r| r.to_string())
                                .unwrap_or_else(|| "?".into()),
                            k.capacity.clone(),
                            format!("{:.1}%", k.used_percent),
                            format!("{:.2}", k.per_day_30),
                            k.projected_exhaustion.clone().unwrap_or_else(|| "-".into()),
                            k.status.to_uppercase(),
                        ]
                    })
                    .collect();
                table(
                    &[
                        "KEY",
                        "TYPES",
                        "LEFT",
                        "TOTAL",
                        "USED",
                        "PER DAY (30 D)",
                        "EXHAUSTED BY",
                        "STATUS",
                    ],
                    &rows,
                );
                for k in keys.iter().filter(|k| k.mismatch.is_some()) {
                    println!(
                        "\nWARNING {}: {}",
                        k.label,
                        k.mismatch.as_deref().unwrap_or_default()
                    );
                }
            }
            if keys.iter().any(|k| k.mismatch.is_some()) {
                return Ok(3);
            }
        }
        Command::Stats { watch } => {
            let p = partition(c, g).await?;
            login(c, g, &p, false).await?;
            loop {
                let s = c.stats(&p.id).await?;
                if g.json {
                    println!("{}", serde_json::to_string(&s).unwrap_or_default());
                } else {
                    let t = &s.token;
                    print!(
                        "{}  {}  sessions {}/{}",
                        s.taken_at,
                        t.label,
                        t.session_count.map(|v| v.to_string()).unwrap_or("?".into()),
                        t.max_session_count
                            .map(|v| v.to_string())
                            .unwrap_or("-".into())
                    );
                    if let Some(l) = &s.luna {
                        print!(
                            "  busy {}  commands {}",
                            l.busy_percent
                                .map(|b| format!("{b:.1}%"))
                                .unwrap_or("…".into()),
                            l.commands.map(|c| c.to_string()).unwrap_or("?".into())
                        );
                        for b in &l.utilization {
                            print!("  {} {}", b.bin, b.count);
                        }
                    }
                    println!(
                        "  console ops {}",
                        s.metrics.ops.iter().map(|o| o.ok).sum::<u64>()
                    );
                }
                match watch {
                    Some(n) => {
                        tokio::time::sleep(std::time::Duration::from_secs((*n).max(1))).await
                    }
                    None => break,
                }
            }
        }
        Command::Audit(a) => return audit(c, g, a).await,
        Command::Completions { .. } | Command::Man => {
            unreachable!("handled before the console opens")
        }
    }
    Ok(0)
}

fn spec(a: &GenArgs) -> ApiResult<KeySpec> {
    if a.algorithm.eq_ignore_ascii_case("hss") {
        if a.hss_lms.is_empty() || a.hss_lms.len() != a.hss_lmots.len() {
            return Err(ApiError::invalid(
                "HSS needs one --hss-lms and one --hss-lmots entry per level (comma-separated).",
            ));
        }
        let mut levels = Vec::new();
        for (l, o) in a.hss_lms.iter().zip(&a.hss_lmots) {
            let l = LmsType::parse(l)
                .ok_or_else(|| ApiError::invalid(format!("unknown LMS type {l}")))?;
            let o = LmotsType::parse(o)
                .ok_or_else(|| ApiError::invalid(format!("unknown LM-OTS type {o}")))?;
            levels.push((l, o));
        }
        let params = HssParams::new(levels).map_err(ApiError::invalid)?;
        if let Some(w) = params.keygen_warning() {
            eprintln!("note: {w}");
        }
        return Ok(KeySpec::Hss { params });
    }
    KeySpec::parse(&a.algorithm).ok_or_else(|| {
        ApiError::new(ErrorCode::InvalidAlgorithm, format!("Unknown algorithm '{}'.", a.algorithm))
            .suggest("Use ml-dsa-44|65|87, ml-kem-512|768|1024, slh-dsa-…, hss, ec-p256, ec-p384, ed25519, rsa-2048|3072|4096, aes-128|256 or generic-secret.")
    })
}

async fn keys(c: &Console, g: &Global, k: &KeysCommand) -> ApiResult<u8> {
    let p = partition(c, g).await?;
    match k {
        KeysCommand::Ls => {
            login(c, g, &p, false).await?;
            let list = c.list_keys(&p.id).await?;
            if g.json {
                output::json(&list);
            } else if list.is_empty() {
                println!("No objects visible. Log in (HSMC_PIN) to see private objects, or generate a key with `hsmc keys gen`.");
            } else {
                let rows: Vec<Vec<String>> = list
                    .iter()
                    .map(|o| {
                        let mut flags = Vec::new();
                        if o.token {
                            flags.push("token");
                        }
                        if o.sensitive == Some(true) {
                            flags.push("sensitive");
                        }
                        if o.extractable == Some(false) {
                            flags.push("non-extractable");
                        }
                        if o.duplicate_label {
                            flags.push("DUPLICATE LABEL");
                        }
                        vec![
                            o.handle.to_string(),
                            o.class.to_lowercase().replace('_', " "),
                            o.algorithm.clone(),
                            o.label.clone(),
                            o.id_hex.clone(),
                            flags.join(","),
                        ]
                    })
                    .collect();
                table(
                    &["HANDLE", "CLASS", "ALGORITHM", "LABEL", "ID", "FLAGS"],
                    &rows,
                );
            }
        }
        KeysCommand::Show { key } => {
            login(c, g, &p, false).await?;
            let s = c.find_key(&p.id, key).await?;
            let d = c.key_details(&p.id, s.handle).await?;
            if g.json {
                output::json(&d);
            } else {
                for a in &d.attributes {
                    let v = match a.status.as_str() {
                        "value" => a.value.clone().unwrap_or_default(),
                        other => format!("({other})"),
                    };
                    println!("{:<28} {v}", a.attribute);
                }
                if let Some(pk) = &d.public_key {
                    println!("{:<28} {}", "fingerprint", pk.fingerprint);
                }
            }
        }
        KeysCommand::Gen(a) => {
            let spec = spec(a)?;
            login(c, g, &p, true).await?;
            let r = c
                .generate_key(
                    &p.id,
                    GenerateRequest {
                        spec,
                        label: a.label.clone(),
                        token: a.token,
                    },
                )
                .await?;
            if g.json {
                output::json(&r);
            } else {
                println!(
                    "generated {} '{}' id:{} in {} ms",
                    r.algorithm, r.label, r.id_hex, r.elapsed_ms
                );
                if let Some(pk) = &r.public_key {
                    println!("public key {} ({} bytes)", pk.fingerprint, pk.raw_len);
                }
                if !a.token {
                    println!(
                        "note: a session object, gone when hsmc exits; add --token to keep it"
                    );
                }
            }
        }
        KeysCommand::Rm { key, yes } => {
            if !yes {
                return Err(ApiError::invalid(format!(
                    "Deleting {key} cannot be undone; add --yes to confirm."
                )));
            }
            login(c, g, &p, true).await?;
            let s = c.find_key(&p.id, key).await?;
            let mut handles = vec![s.handle];
            let mut labels = vec![s.label.clone()];
            if s.class == "PRIVATE_KEY" && !s.id_hex.is_empty() {
                for o in c.list_keys(&p.id).await? {
                    if o.class == "PUBLIC_KEY" && o.id_hex == s.id_hex {
                        handles.push(o.handle);
                        labels.push(o.label.clone());
                    }
                }
            }
            let confirm = console::keys::expected_confirmation(&labels);
            let r = c.destroy_keys(&p.id, &handles, &confirm).await?;
            if g.json {
                output::json(&r);
            } else {
                println!("deleted {} object(s)", r.destroyed.len());
                for f in &r.failed {
                    println!(
                        "not deleted: {} ({}): {}",
                        f.label, f.handle, f.error.message
                    );
                }
            }
            if !r.failed.is_empty() {
                return Ok(1);
            }
        }
        KeysCommand::Cert(a) => {
            login(c, g, &p, true).await?;
            let k = c.find_key(&p.id, &a.key).await?;
            let pem = if a.csr {
                c.certificate_request(&p.id, k.handle, &a.subject).await?
            } else {
                let v = c
                    .issue_certificate(&p.id, k.handle, &a.subject, a.days, !a.no_store)
                    .await?;
                if g.json && a.out.is_none() {
                    output::json(&v);
                    return Ok(0);
                }
                v.pem
            };
            match &a.out {
                Some(path) => {
                    console::keys::write_atomic(path, pem.as_bytes())?;
                    if g.json {
                        output::json(
                            &serde_json::json!({ "path": path, "kind": if a.csr { "csr" } else { "certificate" } }),
                        );
                    } else {
                        println!("wrote {}", path.display());
                    }
                }
                None if g.json => output::json(&serde_json::json!({ "pem": pem })),
                None => print!("{pem}"),
            }
        }
        KeysCommand::ExportPub { key, format, out } => {
            login(c, g, &p, false).await?;
            let s = c.find_key(&p.id, key).await?;
            let f = match format {
                PubFormat::Pem => PublicKeyFormat::Pem,
                PubFormat::Der => PublicKeyFormat::Der,
                PubFormat::Raw => PublicKeyFormat::Raw,
            };
            match out {
                Some(path) => {
                    let e = c.save_public_key(&p.id, s.handle, f, path).await?;
                    if g.json {
                        output::json(
                            &serde_json::json!({ "path": path, "fingerprint": e.fingerprint, "format": e.format }),
                        );
                    } else {
                        println!("wrote {} ({})", path.display(), e.fingerprint);
                    }
                }
                None => {
                    let e = c.export_public_key(&p.id, s.handle, f).await?;
                    if g.json {
                        output::json(&e);
                    } else {
                        match &e.text {
                            Some(t) => print!("{t}"),
                            None => {
                                return Err(ApiError::invalid(
                                    "DER and raw keys are binary; give --out FILE.",
                                ))
                            }
                        }
                    }
                }
            }
        }
    }
    Ok(0)
}

async fn audit(c: &Console, g: &Global, a: &AuditCommand) -> ApiResult<u8> {
    match a {
        AuditCommand::Tail { lines } => {
            let recs = c
                .audit_records(audit::store::Query {
                    limit: *lines,
                    ..Default::default()
                })
                .await?;
            let mut recs = recs;
            recs.reverse();
            if g.json {
                output::json(&recs);
            } else {
                for r in &recs {
                    println!(
                        "{:>6}  {}  {:<8} {:<24} {} {}",
                        r.seq,
                        r.event.timestamp,
                        r.event.status,
                        r.event.action,
                        r.event.resource_id.clone().unwrap_or_default(),
                        r.event.actor_id.clone().unwrap_or_default()
                    );
                }
            }
        }
        AuditCommand::Status => {
            let s = c.audit_status().await?;
            if g.json {
                output::json(&s);
            } else {
                println!("trail        {}", s.log_id);
                println!("store        {} ({})", s.location, s.store);
                println!(
                    "key          {}",
                    serde_json::to_string(&s.key).unwrap_or_default()
                );
                println!(
                    "records      {} (+{} waiting for the key)",
                    s.records, s.pending
                );
                println!(
                    "checkpoints  {} (last: {})",
                    s.checkpoints,
                    s.last_checkpoint_time.unwrap_or_else(|| "none".into())
                );
            }
        }
        AuditCommand::Verify { export } => {
            let p = partition(c, g).await?;
            login(c, g, &p, true).await?;
            let (verdict, extra) = match export {
                Some(path) => {
                    let v = c.audit_verify_export(path).await?;
                    (
                        v.verdict,
                        serde_json::json!({ "path": v.path, "macs_checked": v.macs_checked }),
                    )
                }
                None => {
                    let bar = indicatif::ProgressBar::new(0);
                    bar.set_style(
                        indicatif::ProgressStyle::with_template(
                            "verifying {bar:40} {pos}/{len} records",
                        )
                        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
                    );
                    let b2 = bar.clone();
                    let progress = move |done: i64, total: i64| {
                        b2.set_length(total.max(0) as u64);
                        b2.set_position(done.max(0) as u64);
                    };
                    let cancel = AtomicBool::new(false);
                    let v = c.audit_verify(&progress, &cancel).await?;
                    bar.finish_and_clear();
                    (v, serde_json::json!({}))
                }
            };
            let intact = verdict.is_intact();
            if g.json {
                output::json(&serde_json::json!({ "verdict": verdict, "export": extra }));
            } else {
                match &verdict {
                    audit::Verdict::Intact {
                        records,
                        checkpoints,
                        key_pinned,
                        macs_checked,
                        ..
                    } => {
                        println!("intact: {records} records, {checkpoints} checkpoints (MACs checked: {}, checkpoint key pinned from the HSM: {})", yes_no(*macs_checked), yes_no(*key_pinned));
                    }
                    audit::Verdict::Broken {
                        first_bad_seq,
                        explanation,
                        ..
                    } => {
                        println!("BROKEN at record {first_bad_seq}: {explanation}");
                    }
                }
            }
            return Ok(if intact { 0 } else { 3 });
        }
        AuditCommand::Checkpoints => {
            let p = partition(c, g).await?;
            // With a PIN, each checkpoint is also compared with the key the HSM holds; a
            // wrong PIN is an error, not a quiet fallback.
            login(c, g, &p, false).await?;
            let cps = c.audit_checkpoints().await?;
            if g.json {
                output::json(&cps);
            } else if cps.is_empty() {
                println!("no checkpoints yet (one is written every 100 records, 10 minutes, and at exit)");
            } else {
                for cp in &cps {
                    let hsm = match cp.key_is_hsm_key {
                        Some(true) => "HSM key",
                        Some(false) => "NOT the HSM's key",
                        None => "key not compared (not logged in)",
                    };
                    let sig = match &cp.problem {
                        None => "signature valid".to_string(),
                        Some(p) => format!("SIGNATURE INVALID: {p}"),
                    };
                    println!(
                        "#{:<5} seq {:<8} {}  epoch {}  {}  {}  {}; {}",
                        cp.checkpoint_no,
                        cp.seq,
                        cp.time,
                        cp.epoch,
                        cp.algorithm,
                        cp.key_fingerprint,
                        hsm,
                        sig
                    );
                }
            }
            return Ok(
                if cps
                    .iter()
                    .all(|c| c.signature_valid && c.key_is_hsm_key != Some(false))
                {
                    0
                } else {
                    3
                },
            );
        }
        AuditCommand::PublicKey { out } => {
            let p = partition(c, g).await?;
            // With a PIN the HSM's key, else the newest checkpoint's.
            login(c, g, &p, false).await?;
            let pem = c.audit_public_key_pem().await?;
            match out {
                Some(path) => {
                    console::keys::write_atomic(path, pem.as_bytes())?;
                    if !g.json {
                        eprintln!("wrote {}", path.display());
                    }
                }
                None => print!("{pem}"),
            }
        }
        AuditCommand::Export {
            out,
            format,
            from,
            to,
        } => {
            let p = partition(c, g).await?;
            // The export carries the pinned checkpoint key when the holder is logged in.
            login(c, g, &p, false).await?;
            let f = match format {
                ExportFormat::Jsonl => console::audit_ops::ExportFormat::Jsonl,
                ExportFormat::Csv => console::audit_ops::ExportFormat::Csv,
            };
            let s = c
                .audit_export(
                    f,
                    audit::export::Range {
                        from_time: from.clone(),
                        to_time: to.clone(),
                    },
                    out,
                )
                .await?;
            if g.json {
                output::json(&s);
            } else {
                println!(
                    "wrote {} records and {} checkpoints to {}",
                    s.records, s.checkpoints, s.path
                );
            }
        }
    }
    Ok(0)
}
