// The audit trail: its state, verification with progress and cancel, filters, export.
import { useVirtualizer } from "@tanstack/react-virtual";
import { useCallback, useEffect, useRef, useState } from "react";
import type { ApiError, ExportFormat, RecordView, Verdict } from "../bindings";
import { Badge, EmptyState, ErrorBox, ProgressBar } from "../components";
import { api, newJobId, toApiError } from "../ipc";
import { useStore } from "../store";

const PAGE = 200;
const ROW = 32;

function VerdictBox({ v }: { v: Verdict }) {
  if (v.verdict === "intact") {
    return (
      <div className="verdict ok" role="status" data-testid="verdict" data-verdict="intact">
        <strong>Intact.</strong> {v.records.toLocaleString()} records and {v.checkpoints} checkpoints verified
        {v.last_checkpoint ? `; last checkpoint ${v.last_checkpoint.checkpoint_no} at ${v.last_checkpoint.time} (${v.last_checkpoint.algorithm})` : ""}.
        {!v.key_pinned && " The checkpoint key was taken from the store (log in to the holder to pin it from the HSM)."}
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
  return <span className="mono ellipsis" title={text}>{text === "{}" ? "" : text}</span>;
}

export function AuditView() {
  const { audit, auditTick, toast, setView } = useStore();
  const [records, setRecords] = useState<RecordView[] | null>(null);
  const [more, setMore] = useState(true);
  const [error, setError] = useState<ApiError | null>(null);
  const [action, setAction] = useState("");
  const [status, setStatus] = useState("");
  const [text, setText] = useState("");
  const [verify, setVerify] = useState<{ job: string; done: number; total: number } | null>(null);
  const [verdict, setVerdict] = useState<Verdict | null>(null);
  const [verifyError, setVerifyError] = useState<ApiError | null>(null);
  const parentRef = useRef<HTMLDivElement>(null);

  const query = useCallback(
    (before: number | null) => ({
      before_seq: before,
      after_seq: null,
      limit: PAGE,
      from_time: null,
      to_time: null,
      actor: null,
      action: action || null,
      status: status || null,
      resource: null,
      text: text.trim() || null,
      ascending: false,
    }),
    [action, status, text],
  );

  const load = useCallback(async () => {
    try {
      const r = await api.auditRecords(query(null));
      setRecords(r);
      setMore(r.length === PAGE);
      setError(null);
    } catch (e) {
      setError(toApiError(e));
    }
  }, [query]);

  useEffect(() => {
    void load();
  }, [load, auditTick]);

  const older = async () => {
    const last = records?.[records.length - 1];
    if (!last) return;
    const r = await api.auditRecords(query(last.seq));
    setRecords([...(records ?? []), ...r]);
    setMore(r.length === PAGE);
  };

  const runVerify = async () => {
    const job = newJobId();
    setVerify({ job, done: 0, total: 0 });
    setVerdict(null);
    setVerifyError(null);
    try {
      const v = await api.auditVerify(job, (e) => {
        if (e.kind === "progress") setVerify({ job, done: e.done, total: e.total });
      });
      setVerdict(v);
    } catch (e) {
      setVerifyError(toApiError(e));
    } finally {
      setVerify(null);
    }
  };

  const exportTrail = async (format: ExportFormat) => {
    try {
      const s = await api.auditExport(format, { from_time: null, to_time: null });
      if (s) toast("ok", `Exported ${s.records.toLocaleString()} records to ${s.path}.`);
    } catch (e) {
      toast("error", "Export failed", toApiError(e));
    }
  };

  const checkpoint = async () => {
    try {
      const c = await api.auditCheckpoint();
      toast("ok", `Checkpoint ${c.checkpoint_no} signed (${c.algorithm}) over record ${c.seq}.`);
    } catch (e) {
      toast("error", "No checkpoint written", toApiError(e));
    }
  };

  // eslint-disable-next-line react-hooks/incompatible-library -- TanStack Virtual's API cannot be memoized by the React compiler; this table re-renders on scroll by design.
  const virt = useVirtualizer({ count: records?.length ?? 0, getScrollElement: () => parentRef.current, estimateSize: () => ROW, overscan: 10 });
  const unlocked = audit?.key.state === "unlocked";

  return (
    <div className="view audit-view">
      <header className="view-header">
        <h1>Audit trail</h1>
        <div className="button-row">
          <button onClick={() => void exportTrail("jsonl")}>Export (verifiable JSONL)…</button>
          <button onClick={() => void exportTrail("csv")}>Export CSV…</button>
          <button onClick={() => void checkpoint()} disabled={!unlocked}>
            Checkpoint now
          </button>
          <button className="primary" onClick={() => void runVerify()} disabled={!!verify || !unlocked} data-testid="verify-trail" title={unlocked ? "Verify every record" : "Log in to the partition holding the audit key"}>
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
                <Badge tone="ok">unlocked · epoch {audit.key.epoch} · {audit.key.holder}</Badge>
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
          Verifying and privileged actions need the trail's key. <button onClick={() => setView("connections")}>Log in</button>
        </div>
      )}
      {verify && (
        <div className="inline-form">
          <ProgressBar done={verify.done} total={verify.total} label={verify.total > 0 ? `Verifying ${verify.done.toLocaleString()} of ${verify.total.toLocaleString()} records` : "Verifying…"} />
          <button onClick={() => void api.cancelJob(verify.job)} data-testid="cancel-verify">
            Cancel
          </button>
        </div>
      )}
      {verdict && <VerdictBox v={verdict} />}
      {verifyError && <ErrorBox error={verifyError} title="Verification did not finish" />}
      <div className="filters">
        <input type="search" placeholder="Search metadata" value={text} onChange={(e) => setText(e.target.value)} aria-label="Search records" />
        <input type="text" placeholder="Action (e.g. key.generate)" value={action} onChange={(e) => setAction(e.target.value)} aria-label="Action" />
        <select value={status} onChange={(e) => setStatus(e.target.value)} aria-label="Status">
          <option value="">Any status</option>
          <option value="success">success</option>
          <option value="failure">failure</option>
          <option value="warning">warning</option>
        </select>
      </div>
      {error && <ErrorBox error={error} />}
      {records && records.length === 0 ? (
        <EmptyState title="No records">{action || status || text ? "Nothing matches the filters." : "Everything the console does will be recorded here."}</EmptyState>
      ) : (
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
                  <div key={r.seq} role="row" className={`record-row status-${r.status}`} style={{ position: "absolute", top: 0, left: 0, right: 0, height: ROW, transform: `translateY(${v.start}px)` }} data-action={r.action} data-testid="audit-row">
                    <span role="gridcell">{r.seq}</span>
                    <span role="gridcell" className="mono">{r.timestamp.replace("T", " ").replace("Z", "")}</span>
                    <span role="gridcell">{r.action}</span>
                    <span role="gridcell" className="ellipsis" title={r.resource_id ?? ""}>
                      {r.resource_id}
                    </span>
                    <span role="gridcell">
                      <Badge tone={r.status === "success" ? "ok" : r.status === "failure" ? "bad" : "warn"}>{r.status}</Badge>
                    </span>
                    <span role="gridcell" className="ellipsis">{r.actor_id}</span>
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
      )}
    </div>
  );
}
