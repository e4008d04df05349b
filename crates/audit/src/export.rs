//! Export for auditors: JSON Lines (records, checkpoints, the checkpoint public key, an end
//! line with counts), verifiable offline; and CSV for spreadsheets. Files are written to a
//! temporary name, synced and renamed: never half a file under the final name. An export
//! without its end line was cut short (a crash) and is reported as such.

use std::collections::BTreeMap;
use std::io::{BufRead, Write};
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::encode::{self, ChainKey, GENESIS};
use crate::log::AuditLog;
use crate::verify::{self, Verdict, VerifyInput};
use crate::{now_rfc3339, AuditError, Checkpoint, Record, Result};

pub const FORMAT: &str = "hsm-console-audit-export/1";

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Line {
    Header {
        format: String,
        log_id: String,
        exported_at: String,
        from_time: Option<String>,
        to_time: Option<String>,
        /// Chain values of the record before the first exported one (genesis: zeros).
        prev_hmac: String,
        prev_digest: String,
    },
    Record(Record),
    Checkpoint(Checkpoint),
    PublicKey {
        algorithm: String,
        spki: String,
    },
    End {
        records: i64,
        checkpoints: i64,
    },
}

#[derive(Debug, Clone, Serialize, Deserialize, ts_rs::TS)]
pub struct ExportSummary {
    pub path: String,
    pub records: i64,
    pub checkpoints: i64,
    pub first_seq: Option<i64>,
    pub last_seq: Option<i64>,
}

/// A time range (RFC 3339, inclusive); `None` = unbounded.
#[derive(Debug, Clone, Default, Serialize, Deserialize, ts_rs::TS)]
pub struct Range {
    pub from_time: Option<String>,
    pub to_time: Option<String>,
}

fn tmp_path(out: &Path) -> std::path::PathBuf {
    let name = out
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_else(|| "export".into());
    out.with_file_name(format!(".{name}.partial"))
}

fn finish(tmp: &Path, out: &Path, f: std::fs::File) -> Result<()> {
    f.sync_all()
        .map_err(|e| AuditError::store(format!("cannot write {}", tmp.display()), e))?;
    drop(f);
    std::fs::rename(tmp, out)
        .map_err(|e| AuditError::store(format!("cannot write {}", out.display()), e))
}

/// All records of the trail in seq order, filtered by time, with the chain values before
/// the first one.
async fn collect(log: &AuditLog, range: &Range) -> Result<(Vec<Record>, [u8; 32], [u8; 32])> {
    let (mut prev_hmac, mut prev_digest) = (GENESIS, GENESIS);
    let mut out = Vec::new();
    let mut after = 0;
    loop {
        let page = log.store().trail_page(log.log_id(), after, 10_000).await?;
        if page.is_empty() {
            break;
        }
        for r in page {
            after = r.seq;
            let before = range
                .from_time
                .as_ref()
                .map(|f| &r.event.timestamp < f)
                .unwrap_or(false);
            let beyond = range
                .to_time
                .as_ref()
                .map(|t| &r.event.timestamp > t)
                .unwrap_or(false);
            if before {
                prev_digest = encode::digest_link(&encode::encode(&r), &prev_digest);
                prev_hmac = encode::hex32(&r.hmac_chain).unwrap_or(GENESIS);
            } else if !beyond {
                out.push(r);
            }
        }
    }
    Ok((out, prev_hmac, prev_digest))
}

/// Write the JSON Lines export.
pub async fn export_jsonl(
    log: &AuditLog,
    range: &Range,
    out: &Path,
    public_key: Option<(String, Vec<u8>)>,
) -> Result<ExportSummary> {
    let (records, prev_hmac, prev_digest) = collect(log, range).await?;
    let first = records.first().map(|r| r.seq);
    let last = records.last().map(|r| r.seq);
    let checkpoints: Vec<Checkpoint> = log
        .checkpoints()
        .await?
        .into_iter()
        .filter(|c| match (first, last) {
            // Up to the end of the trail, the checkpoints beyond the last record too: they
            // show offline that records were cut from the end.
            (Some(f), Some(l)) => c.seq >= f - 1 && (c.seq <= l || range.to_time.is_none()),
            _ => range.from_time.is_none() && range.to_time.is_none(),
        })
        .collect();
    let tmp = tmp_path(out);
    let mut f = std::fs::File::create(&tmp)
        .map_err(|e| AuditError::store(format!("cannot create {}", tmp.display()), e))?;
    let mut w = std::io::BufWriter::new(&mut f);
    let mut line = |l: &Line| -> Result<()> {
        serde_json::to_writer(&mut w, l).map_err(AuditError::store_cause)?;
        w.write_all(b"\n").map_err(AuditError::store_cause)
    };
    line(&Line::Header {
        format: FORMAT.into(),
        log_id: log.log_id().into(),
        exported_at: now_rfc3339(),
        from_time: range.from_time.clone(),
        to_time: range.to_time.clone(),
        prev_hmac: hex::encode(prev_hmac),
        prev_digest: hex::encode(prev_digest),
    })?;
    for r in &records {
        line(&Line::Record(r.clone()))?;
    }
    for c in &checkpoints {
        line(&Line::Checkpoint(c.clone()))?;
    }
    let pk = public_key.or_else(|| {
        checkpoints.last().and_then(|c| {
            hex::decode(&c.public_key)
                .ok()
                .map(|k| (c.algorithm.clone(), k))
        })
    });
    if let Some((algorithm, spki)) = pk {
        line(&Line::PublicKey {
            algorithm,
            spki: hex::encode(spki),
        })?;
    }
    line(&Line::End {
        records: records.len() as i64,
        checkpoints: checkpoints.len() as i64,
    })?;
    w.flush().map_err(AuditError::store_cause)?;
    drop(w);
    finish(&tmp, out, f)?;
    Ok(ExportSummary {
        path: out.display().to_string(),
        records: records.len() as i64,
        checkpoints: checkpoints.len() as i64,
        first_seq: first,
        last_seq: last,
    })
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// Write a CSV for spreadsheets (not verifiable: use the JSON Lines export for that).
pub async fn export_csv(log: &AuditLog, range: &Range, out: &Path) -> Result<ExportSummary> {
    let (records, ..) = collect(log, range).await?;
    let tmp = tmp_path(out);
    let mut f = std::fs::File::create(&tmp).map_err(AuditError::store_cause)?;
    let mut w = std::io::BufWriter::new(&mut f);
    let io = AuditError::store_cause;
    writeln!(w, "seq,timestamp,actor_id,actor_ip,session_id,action,resource_type,resource_id,algorithm,status,error_code,metadata,epoch,hmac_chain").map_err(io)?;
    for r in &records {
        let e = &r.event;
        let cols = [
            r.seq.to_string(),
            e.timestamp.clone(),
            e.actor_id.clone().unwrap_or_default(),
            e.actor_ip.clone(),
            e.session_id.clone(),
            e.action.clone(),
            e.resource_type.clone(),
            e.resource_id.clone().unwrap_or_default(),
            e.algorithm.clone().unwrap_or_default(),
            e.status.clone(),
            e.error_code.clone().unwrap_or_default(),
            e.metadata.clone(),
            r.epoch.to_string(),
            r.hmac_chain.clone(),
        ];
        writeln!(
            w,
            "{}",
            cols.iter()
                .map(|c| csv_field(c))
                .collect::<Vec<_>>()
                .join(",")
        )
        .map_err(io)?;
    }
    w.flush().map_err(io)?;
    drop(w);
    finish(&tmp, out, f)?;
    Ok(ExportSummary {
        path: out.display().to_string(),
        records: records.len() as i64,
        checkpoints: 0,
        first_seq: records.first().map(|r| r.seq),
        last_seq: records.last().map(|r| r.seq),
    })
}

/// A parsed export.
#[derive(Debug, Clone)]
pub struct Parsed {
    pub log_id: String,
    pub prev_hmac: [u8; 32],
    pub prev_digest: [u8; 32],
    pub records: Vec<Record>,
    pub checkpoints: Vec<Checkpoint>,
    pub public_key: Option<Vec<u8>>,
    /// The file ends without its end line, or with a partial line: the writer was cut off.
    pub torn: bool,
}

pub fn read_jsonl(path: &Path) -> Result<Parsed> {
    let f = std::fs::File::open(path)
        .map_err(|e| AuditError::Invalid(format!("cannot read {}: {e}", path.display())))?;
    parse_jsonl(std::io::BufReader::new(f))
}

pub fn parse_jsonl(reader: impl BufRead) -> Result<Parsed> {
    let mut p = Parsed {
        log_id: String::new(),
        prev_hmac: GENESIS,
        prev_digest: GENESIS,
        records: Vec::new(),
        checkpoints: Vec::new(),
        public_key: None,
        torn: true,
    };
    let mut header = false;
    for (n, line) in reader.lines().enumerate() {
        let line = line.map_err(|e| AuditError::Invalid(format!("line {}: {e}", n + 1)))?;
        if line.trim().is_empty() {
            continue;
        }
        let parsed: Line = match serde_json::from_str(&line) {
            Ok(l) => l,
            // A line that does not parse can only be the last, cut off mid-write.
            Err(_) => {
                p.torn = true;
                break;
            }
        };
        match parsed {
            Line::Header {
                format,
                log_id,
                prev_hmac,
                prev_digest,
                ..
            } => {
                if format != FORMAT {
                    return Err(AuditError::Invalid(format!(
                        "not an audit export of this console ({format})"
                    )));
                }
                p.log_id = log_id;
                p.prev_hmac = encode::hex32(&prev_hmac)
                    .ok_or_else(|| AuditError::Invalid("header: prev_hmac".into()))?;
                p.prev_digest = encode::hex32(&prev_digest)
                    .ok_or_else(|| AuditError::Invalid("header: prev_digest".into()))?;
                header = true;
            }
            _ if !header => {
                return Err(AuditError::Invalid(
                    "the export does not start with its header line".into(),
                ))
            }
            Line::Record(r) => p.records.push(r),
            Line::Checkpoint(c) => p.checkpoints.push(c),
            Line::PublicKey { spki, .. } => p.public_key = hex::decode(spki).ok(),
            Line::End {
                records,
                checkpoints,
            } => {
                if records != p.records.len() as i64 || checkpoints != p.checkpoints.len() as i64 {
                    return Err(AuditError::Invalid(format!(
                        "the end line counts {records} records and {checkpoints} checkpoints, the file holds {} and {}",
                        p.records.len(),
                        p.checkpoints.len()
                    )));
                }
                p.torn = false;
            }
        }
    }
    if !header {
        return Err(AuditError::Invalid("empty or unreadable export".into()));
    }
    Ok(p)
}

/// Verify an export. With MAC keys (unwrapped by the HSM) every record is checked; without,
/// the public digest chain is checked against the signed checkpoints. `pinned_key` (SPKI)
/// replaces the key recorded in the export.
pub fn verify_export(
    p: &Parsed,
    keys: Option<BTreeMap<i64, ChainKey>>,
    pinned_key: Option<Vec<u8>>,
) -> Verdict {
    let input = VerifyInput {
        log_id: p.log_id.clone(),
        keys: keys.unwrap_or_default(),
        trusted_public_key: pinned_key,
        anchors: Vec::new(),
    };
    verify::verify_records(
        &input,
        &p.records,
        &p.checkpoints,
        p.prev_hmac,
        p.prev_digest,
        p.torn,
    )
}
