// The audit trail: its state, verification with progress and cancel, filters, export.
import { useVirtualizer } from "@tanstack/react-virtual";
import { useCallback, useEffect, useRef, useState } from "react";
import type { CheckpointView, ExportFormat, Query, RecordView, Verdict } from "../bindings";
import { Badge, Dialog, EmptyState, ErrorBox, ProgressBar } from "../components";
import { api, newJobId } from "../ipc";
import { useAudit, useJumps, useNavigate, useToast } from "../state";
import { useCommand } from "../useCommand";

const PAGE = 200;
const ROW = 32;

function VerdictBox({ v }: { v: Verdict }) {
  if (v.verdict === "intact") {
    return (
      <div className="verdict ok" role="status" data-testid="verdict" data-verdict="intact">
        <strong>Intact.</strong> {v.records.toLocaleString()} records and {v.checkpoints} checkpoints verified
        {v.last_checkpoint
          ? `; last checkpoint ${v.last_checkpoint.checkpoint_no} at ${v.last_checkpoint.time} (${v.last_checkpoint.algorithm})`
          : ""}
        .{!v.key_pinned && " The checkpoint key was taken from the store (log in to the holder to pin it from the HSM)."}
      </div>
    );
  }
  return (
    <div className="verdict bad" role="alert" data-testid="verdict" data-verdict="broken">
      <strong>Broken at record {v.first_bad_seq}.</strong> {v.explanation}
      <div className="muted small">
        finding: {v.finding.kind}; {v.records_checked.toLocaleString()} records checked before it
      </div>
    </div>
  );
}

function Metadata({ json }: { json: string }) {
  let text = json;
  try {
    text = JSON.stringify(JSON.parse(json), null, 1).replace(/\n\s*/g, " ");
  } catch {
    /* stored as it was written */
  }
  return (
    <span className="mono ellipsis" title={text}>
      {text === "{}" ? "" : text}
    </span>
  );
}

function toIso(local: string, end: boolean): string | null {
  if (!local) return null;
  const d = new Date(local);
  if (Number.isNaN(d.getTime())) return null;
  if (end && local.length <= 10) d.setHours(23, 59, 59, 999);
  return d.toISOString();
}

function keyIdOf(r: RecordView): string | null {
  try {
    const m = JSON.parse(r.metadata) as Record<string, unknown>;
    const id = m.key_id ?? m.id ?? (m.key as Record<string, unknown> | undefined)?.id;
    return typeof id === "string" && id ? id : null;
  } catch {
    return null;
  }
}

/// The signed file and its first signature, for a "sign" record.
function signedFileOf(r: RecordView): { file: string; sig: string } | null {
  if (r.action !== "sign" || r.status !== "success") return null;
  try {
    const m = JSON.parse(r.metadata) as Record<string, unknown>;
    const outputs = Array.isArray(m.outputs) ? m.outputs.filter((o): o is string => typeof o === "string") : [];
    return typeof m.path === "string" && outputs[0] ? { file: m.path, sig: outputs[0] } : null;
  } catch {
    return null;
  }
}

function RecordDetail({ r, onClose }: { r: RecordView; onClose: () => void }) {
  const { showKeys, showVerify } = useJumps();
  const keyId = keyIdOf(r);
  const signed = signedFileOf(r);
  let meta = r.metadata;
  try {
    meta = JSON.stringify(JSON.parse(r.metadata), null, 2);
  } catch {
    /* shown as stored */
  }
  return (
    <aside className="detail-pane record-detail" data-testid="record-detail">
      <header className="card-header">
        <h3>Record {r.seq}</h3>
        <button className="icon-button" onClick={onClose} aria-label="Close record">
          ×
        </button>
      </header>
      <dl className="info-grid">
        {(
          [
            ["Time", r.timestamp],
            ["Action", r.action],
            ["Status", r.status],
            ["Resource", `${r.resource_type}${r.resource_id ? `: ${r.resource_id}` : ""}`],
            ["Algorithm", r.algorithm ?? "—"],
            ["Error code", r.error_code ?? "—"],
            ["Actor", `${r.actor_id ?? "?"} (${r.actor_ip})`],
            ["Session", r.session_id],
            ["Epoch", String(r.epoch)],
          ] as const
        ).map(([k, v]) => (
          <div key={k}>
            <dt>{k}</dt>
            <dd>{v}</dd>
          </div>
        ))}
      </dl>
      <h4>Chain value</h4>
      <code className="hex">{r.hmac_chain}</code>
      <h4>Metadata</h4>
      <pre className="meta">{meta}</pre>
      {keyId && (
        <button onClick={() => showKeys(keyId)} data-testid="record-key">
          Show the key ({keyId.slice(0, 12)}…)
        </button>
      )}
      {signed && (
        <button onClick={() => showVerify(signed)} data-testid="record-signed-file" title={signed.file}>
          Check the signed file again
        </button>
      )}
    </aside>
  );
}

export function AuditView() {
  const { audit, auditTick } = useAudit();
  const { auditSearch } = useJumps();
  const navigate = useNavigate();
  const toast = useToast();
  const [records, setRecords] = useState<RecordView[] | null>(null);
  const [more, setMore] = useState(true);
  const [action, setAction] = useState("");
  const [status, setStatus] = useState("");
  const [text, setText] = useState(auditSearch);
  const [actor, setActor] = useState("");
  const [from, setFrom] = useState("");
  const [to, setTo] = useState("");
  const [selected, setSelected] = useState<RecordView | null>(null);
  const [checkpoints, setCheckpoints] = useState<CheckpointView[] | null>(null);
  const [rotate, setRotate] = useState(false);
  const [verify, setVerify] = useState<{ job: string; done: number; total: number } | null>(null);
  const parentRef = useRef<HTMLDivElement>(null);

  const query = useCallback(
    (before: number | null) => ({
      before_seq: before,
      after_seq: null,
      limit: PAGE,
      from_time: toIso(from, false),
      to_time: toIso(to, true),
      actor: actor.trim() || null,
      action: action || null,
      status: status || null,
      resource: null,
      text: text.trim() || null,
      ascending: false,
    }),
    [action, status, text, actor, from, to],
  );

  // A page of records: the newest (no `before_seq`: it replaces the table) or an older one.
  const { run: fetchPage, error } = useCommand(
    async (q: Query) => {
      const r = await api.auditRecords(q);
      setRecords((old) => (q.before_seq === null ? r : [...(old ?? []), ...r]));
      setMore(r.length === PAGE);
    },
    { keepError: true },
  );
  const load = useCallback(() => fetchPage(query(null)), [fetchPage, query]);

  useEffect(() => {
    void load();
  }, [load, auditTick]);

  // Every checkpoint's signature is checked in Rust: reload when there is a new one or the
  // key's holder logs in or out, not on every record.
  const checkpointCount = audit?.checkpoints;
  const keyState = audit?.key.state;
  useEffect(() => {
    let live = true;
    api.auditCheckpoints().then(
      (c) => live && setCheckpoints(c),
      () => live && setCheckpoints(null),
    );
    return () => {
      live = false;
    };
  }, [checkpointCount, keyState]);

  // Verifying the whole trail, with progress (`verify`) and cancel.
  const verifying = useCommand(async (job: string) => {
    try {
      return await api.auditVerify(job, (e) => {
        if (e.kind === "progress") setVerify({ job, done: e.done, total: e.total });
      });
    } finally {
      setVerify(null);
    }
  });
  const { data: verdict, error: verifyError } = verifying;

  const badSeq = verdict?.verdict === "broken" ? verdict.first_bad_seq : null;
  const showBad = useCallback(
    (seq: number) => {
      const i = records?.findIndex((r) => r.seq === seq) ?? -1;
      if (i >= 0) virtRef.current?.scrollToIndex(i, { align: "center" });
    },
    [records],
  );
  const virtRef = useRef<{ scrollToIndex: (i: number, o: { align: "center" }) => void } | null>(null);
  useEffect(() => {
    if (badSeq !== null) showBad(badSeq);
  }, [badSeq, showBad]);

  const { run: exportKey } = useCommand(
    async () => {
      const pem = await api.auditPublicKey();
      const p = await api.saveExport("audit-checkpoint-key.pem", "pem", { text: pem });
      if (p) toast("ok", `Saved ${p}.`);
    },
    { errorToast: "Export failed" },
  );
  const { run: doRotate } = useCommand(
    async () => {
      const epoch = await api.auditRotateKey();
      toast("ok", `The audit trail now uses key epoch ${epoch}.`);
      setRotate(false);
    },
    { errorToast: "The key was not rotated" },
  );

  const older = useCallback(async () => {
    const last = records?.[records.length - 1];
    if (last) await fetchPage(query(last.seq));
  }, [records, query, fetchPage]);

  const runVerify = async () => {
    const job = newJobId();
    setVerify({ job, done: 0, total: 0 });
    verifying.reset();
    await verifying.run(job);
  };

  const { run: exportTrail } = useCommand(
    async (format: ExportFormat) => {
      // The date filter, when set, is the exported range; otherwise the whole trail.
      const s = await api.auditExport(format, { from_time: toIso(from, false), to_time: toIso(to, true) });
      if (s) toast("ok", `Exported ${s.records.toLocaleString()} records to ${s.path}.`);
    },
    { errorToast: "Export failed" },
  );

  const { run: checkpoint } = useCommand(
    async () => {
      const c = await api.auditCheckpoint();
      toast("ok", `Checkpoint ${c.checkpoint_no} signed (${c.algorithm}) over record ${c.seq}.`);
    },
    { errorToast: "No checkpoint written" },
  );

  // eslint-disable-next-line react-hooks/incompatible-library -- TanStack Virtual's API cannot be memoized by the React compiler; this table re-renders on scroll by design.
  const virt = useVirtualizer({
    count: records?.length ?? 0,
    getScrollElement: () => parentRef.current,
    estimateSize: () => ROW,
    overscan: 10,
  });
  virtRef.current = virt;
  // Older pages load as the table nears its end, so 100,000 records scroll like one list.
  const lastShown = virt.getVirtualItems().at(-1)?.index ?? 0;
  const loadingOlder = useRef(false);
  useEffect(() => {
    if (!more || !records || loadingOlder.current || lastShown < records.length - 40) return;
    loadingOlder.current = true;
    void older().finally(() => {
      loadingOlder.current = false;
    });
  }, [lastShown, more, records, older]);
  const unlocked = audit?.key.state === "unlocked";

  return (
    <div className="view audit-view">
      <header className="view-header">
        <h1>Audit trail</h1>
        <div className="button-row">
          <button
            onClick={() => void exportTrail("jsonl")}
            data-testid="export-jsonl"
            title={from || to ? "The records in the date range of the filter" : "The whole trail (set the date filter for a range)"}
          >
            Export (verifiable JSONL){from || to ? " of the date range" : ""}…
          </button>
          <button onClick={() => void exportTrail("csv")} data-testid="export-csv">
            Export CSV{from || to ? " of the date range" : ""}…
          </button>
          <button onClick={() => void checkpoint()} disabled={!unlocked}>
            Checkpoint now
          </button>
          <button onClick={() => setRotate(true)} disabled={!unlocked} data-testid="rotate-key">
            Rotate key…
          </button>
          <button
            className="primary"
            onClick={() => void runVerify()}
            disabled={!!verify || !unlocked}
            data-testid="verify-trail"
            title={unlocked ? "Verify every record" : "Log in to the partition holding the audit key"}
          >
            Verify trail
          </button>
        </div>
      </header>
      {audit && (
        <dl className="info-grid audit-status" data-testid="audit-status">
          <div>
            <dt>Store</dt>
            <dd>
              {audit.store} · {audit.location}
            </dd>
          </div>
          <div>
            <dt>Trail</dt>
            <dd className="mono">{audit.log_id}</dd>
          </div>
          <div>
            <dt>Key</dt>
            <dd>
              {audit.key.state === "unlocked" ? (
                <Badge tone="ok">
                  unlocked · epoch {audit.key.epoch} · {audit.key.holder}
                </Badge>
              ) : audit.key.state === "locked" ? (
                <Badge tone="warn">locked · held by {audit.key.holder}</Badge>
              ) : (
                <Badge tone="warn">no key yet — created at the first user login</Badge>
              )}
            </dd>
          </div>
          <div>
            <dt>Records</dt>
            <dd>
              {audit.records.toLocaleString()}
              {audit.pending > 0 && ` (+${audit.pending} waiting for the key)`}
            </dd>
          </div>
          <div>
            <dt>Last verification</dt>
            <dd data-testid="last-verification">
              {audit.last_verification ? (
                <>
                  <Badge tone={audit.last_verification.intact ? "ok" : "bad"}>
                    {audit.last_verification.intact ? "intact" : `broken at ${audit.last_verification.first_bad_seq}`}
                  </Badge>{" "}
                  {new Date(audit.last_verification.at).toLocaleString()} ({audit.last_verification.trigger})
                </>
              ) : (
                "not verified since the console started"
              )}
              <div className="muted small">automatic: {audit.auto_verify} (Settings)</div>
            </dd>
          </div>
          <div>
            <dt>Checkpoints</dt>
            <dd>
              {audit.checkpoints}
              {audit.last_checkpoint_time && ` · last ${audit.last_checkpoint_time} (record ${audit.last_checkpoint_seq})`}
            </dd>
          </div>
        </dl>
      )}
      {!unlocked && audit && (
        <div className="notice">
          Verifying and privileged actions need the trail's key. <button onClick={() => navigate("connections")}>Log in</button>
        </div>
      )}
      {verify && (
        <div className="inline-form">
          <ProgressBar
            done={verify.done}
            total={verify.total}
            label={
              verify.total > 0 ? `Verifying ${verify.done.toLocaleString()} of ${verify.total.toLocaleString()} records` : "Verifying…"
            }
          />
          <button onClick={() => void api.cancelJob(verify.job)} data-testid="cancel-verify">
            Cancel
          </button>
        </div>
      )}
      {verdict && <VerdictBox v={verdict} />}
      {verifyError && <ErrorBox error={verifyError} title="Verification did not finish" />}
      <div className="filters">
        <input
          type="search"
          placeholder="Search metadata"
          value={text}
          onChange={(e) => setText(e.target.value)}
          aria-label="Search records"
          data-testid="audit-search"
        />
        <input
          type="text"
          placeholder="Action (e.g. key.generate)"
          value={action}
          onChange={(e) => setAction(e.target.value)}
          aria-label="Action"
        />
        <input type="text" placeholder="Actor" value={actor} onChange={(e) => setActor(e.target.value)} aria-label="Actor" />
        <label className="inline-form small">
          from <input type="date" value={from} onChange={(e) => setFrom(e.target.value)} aria-label="From date" data-testid="audit-from" />
        </label>
        <label className="inline-form small">
          to <input type="date" value={to} onChange={(e) => setTo(e.target.value)} aria-label="To date" />
        </label>
        <select value={status} onChange={(e) => setStatus(e.target.value)} aria-label="Status">
          <option value="">Any status</option>
          <option value="success">success</option>
          <option value="failure">failure</option>
          <option value="warning">warning</option>
        </select>
      </div>
      {error && <ErrorBox error={error} />}
      {records && records.length === 0 ? (
        <EmptyState title="No records">
          {action || status || text || actor || from || to
            ? "Nothing matches the filters."
            : "Everything the console does will be recorded here."}
        </EmptyState>
      ) : (
        <div className={selected ? "split" : undefined}>
          <div className="record-table" role="grid" aria-label="Audit records" data-testid="audit-records">
            <div className="record-row record-head" role="row">
              <span role="columnheader">#</span>
              <span role="columnheader">Time</span>
              <span role="columnheader">Action</span>
              <span role="columnheader">Resource</span>
              <span role="columnheader">Status</span>
              <span role="columnheader">Actor</span>
              <span role="columnheader">Details</span>
            </div>
            <div className="record-scroll" ref={parentRef}>
              <div style={{ height: virt.getTotalSize(), position: "relative" }}>
                {virt.getVirtualItems().map((v) => {
                  const r = records![v.index]!;
                  return (
                    <div
                      key={r.seq}
                      role="row"
                      className={`record-row status-${r.status}${r.seq === badSeq ? " bad-record" : ""}${selected?.seq === r.seq ? " active" : ""}`}
                      style={{ position: "absolute", top: 0, left: 0, right: 0, height: ROW, transform: `translateY(${v.start}px)` }}
                      data-action={r.action}
                      data-seq={r.seq}
                      data-bad={r.seq === badSeq ? "true" : undefined}
                      data-testid="audit-row"
                      onClick={() => setSelected(r)}
                    >
                      <span role="gridcell">{r.seq}</span>
                      <span role="gridcell" className="mono">
                        {r.timestamp.replace("T", " ").replace("Z", "")}
                      </span>
                      <span role="gridcell">{r.action}</span>
                      <span role="gridcell" className="ellipsis" title={r.resource_id ?? ""}>
                        {r.resource_id}
                      </span>
                      <span role="gridcell">
                        <Badge tone={r.status === "success" ? "ok" : r.status === "failure" ? "bad" : "warn"}>{r.status}</Badge>
                      </span>
                      <span role="gridcell" className="ellipsis">
                        {r.actor_id}
                      </span>
                      <span role="gridcell">
                        <Metadata json={r.metadata} />
                      </span>
                    </div>
                  );
                })}
              </div>
            </div>
            {more && (
              <button onClick={() => void older()} className="load-more">
                Load older records
              </button>
            )}
          </div>
          {selected && <RecordDetail r={selected} onClose={() => setSelected(null)} />}
        </div>
      )}
      <section className="card" data-testid="checkpoints">
        <header className="card-header">
          <h3>Checkpoints</h3>
          <button onClick={() => void exportKey()}>Export checkpoint public key (PEM)…</button>
        </header>
        {checkpoints && checkpoints.length > 0 ? (
          <table className="table compact">
            <thead>
              <tr>
                <th>#</th>
                <th>Up to record</th>
                <th>Time</th>
                <th>Epoch</th>
                <th>Algorithm</th>
                <th>Key</th>
                <th>Signature</th>
              </tr>
            </thead>
            <tbody>
              {checkpoints
                .slice()
                .reverse()
                .slice(0, 200)
                .map((c) => (
                  <tr key={c.checkpoint_no}>
                    <td>{c.checkpoint_no}</td>
                    <td>{c.seq}</td>
                    <td>{c.time}</td>
                    <td>{c.epoch}</td>
                    <td>{c.algorithm}</td>
                    <td className="mono small" title={c.key_fingerprint}>
                      {c.key_fingerprint.slice(0, 20)}…{" "}
                      {c.key_is_hsm_key === true ? (
                        <Badge tone="ok">HSM key</Badge>
                      ) : c.key_is_hsm_key === false ? (
                        <Badge tone="bad">not the HSM's key</Badge>
                      ) : null}
                    </td>
                    <td>{c.signature_valid ? <Badge tone="ok">valid</Badge> : <Badge tone="bad">{c.problem ?? "invalid"}</Badge>}</td>
                  </tr>
                ))}
            </tbody>
          </table>
        ) : (
          <p className="muted">No checkpoint yet: one is signed every 100 records or 10 minutes (Settings), and at exit.</p>
        )}
      </section>
      {rotate && (
        <Dialog
          title="Rotate the audit key"
          onClose={() => setRotate(false)}
          footer={
            <>
              <button onClick={() => setRotate(false)}>Cancel</button>
              <button className="primary" onClick={() => void doRotate()} data-testid="rotate-confirm">
                Rotate
              </button>
            </>
          }
        >
          <p>
            A new random key starts a new epoch: the rotation is recorded under the old key and later records use the new one. Older records
            stay verifiable with their epoch's key.
          </p>
        </Dialog>
      )}
    </div>
  );
}
