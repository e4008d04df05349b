// The audit trail: its state, records per day (a bar chart: click a day to filter the
// table to it), verification with progress and cancel, filters, export.
import { useCallback, useEffect, useRef, useState } from "react";
import { useTranslation } from "react-i18next";
import type { DayCount, Query, RecordView } from "../../bindings";
import { EmptyState, ErrorBox } from "../../components";
import { api, newJobId } from "../../ipc";
import { useAudit, useJumps, useNavigate } from "../../state";
import { useCommand } from "../../useCommand";
import type { VirtualTableHandle } from "../../components/VirtualTable";
import { RecordTable } from "./RecordTable";
import { RecordDetail } from "./RecordDetail";
import { AuditStatus, DAYS, VerdictBox, DaysChart } from "./TrailSummary";
import { Checkpoints, RotateKeyDialog } from "./TrailKey";
import { AuditFilters, isFiltered, recordQuery, type RecordFilter } from "./AuditFilters";
import { TrailActions, VerifyProgress, type VerifyRun } from "./TrailActions";

const PAGE = 200;

export function AuditView() {
  const { t } = useTranslation();
  const { audit, auditTick } = useAudit();
  const { auditSearch, auditTarget, consumeAuditTarget } = useJumps();
  const navigate = useNavigate();
  const [records, setRecords] = useState<RecordView[] | null>(null);
  const [more, setMore] = useState(true);
  const [filter, setFilter] = useState<RecordFilter>(() => ({
    text: auditSearch,
    action: "",
    actor: "",
    from: auditTarget?.day ?? "",
    to: auditTarget?.day ?? "",
    status: "",
  }));
  const { from, to } = filter;
  const [days, setDays] = useState<DayCount[] | null>(null);
  // The Overview's target is read once (above, and the record below); the next visit starts unfiltered.
  useEffect(() => {
    if (auditTarget) consumeAuditTarget();
  }, [auditTarget, consumeAuditTarget]);
  const [selected, setSelected] = useState<RecordView | null>(null);
  const [rotate, setRotate] = useState(false);
  const [verify, setVerify] = useState<VerifyRun | null>(null);

  const query = useCallback((before: number | null) => recordQuery(filter, before, PAGE), [filter]);

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

  useEffect(() => {
    let live = true;
    api.auditDays(DAYS).then(
      (d) => live && setDays(d),
      () => live && setDays(null),
    );
    return () => {
      live = false;
    };
  }, [auditTick]);
  // A click on a day filters the table to it (again: back to every day).
  const pickDay = (d: string | null) => {
    setFilter((f) => ({ ...f, from: d ?? "", to: d ?? "" }));
  };
  const chartDay = from && from === to ? from : null;

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
  // A record the Overview pointed at: selected and scrolled to once it is in the table.
  const [target, setTarget] = useState(auditTarget?.seq ?? null);
  useEffect(() => {
    if (target === null || !records) return;
    const i = records.findIndex((r) => r.seq === target);
    if (i < 0) return;
    virtRef.current?.scrollToIndex(i, "center");
    // eslint-disable-next-line react-hooks/set-state-in-effect -- the record arrives with a page from the backend: selecting it then syncs with that answer, once (the target is cleared).
    setSelected(records[i]!);
    setTarget(null);
  }, [target, records]);
  const showBad = useCallback(
    (seq: number) => {
      const i = records?.findIndex((r) => r.seq === seq) ?? -1;
      if (i >= 0) virtRef.current?.scrollToIndex(i, "center");
    },
    [records],
  );
  const virtRef = useRef<VirtualTableHandle>(null);
  useEffect(() => {
    if (badSeq !== null) showBad(badSeq);
  }, [badSeq, showBad]);

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

  // Older pages load as the table nears its end, so 100,000 records scroll like one list.
  const [lastShown, setLastShown] = useState(0);
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
        <h1>{t("audit.title")}</h1>
        <TrailActions
          from={from}
          to={to}
          unlocked={unlocked}
          verifying={!!verify}
          onVerify={() => void runVerify()}
          onRotate={() => setRotate(true)}
        />
      </header>
      {audit && <AuditStatus audit={audit} />}
      {!unlocked && audit && (
        <div className="notice">
          {t("audit.needs_key")} <button onClick={() => navigate("connections")}>{t("audit.log_in")}</button>
        </div>
      )}
      {verify && <VerifyProgress verify={verify} />}
      {verdict && <VerdictBox v={verdict} />}
      {verifyError && <ErrorBox error={verifyError} title={t("audit.verify_unfinished")} />}
      {days && <DaysChart days={days} day={chartDay} onDay={pickDay} />}
      <AuditFilters filter={filter} onChange={setFilter} />
      {error && <ErrorBox error={error} />}
      {records && records.length === 0 ? (
        <EmptyState title={t("audit.no_records")}>{isFiltered(filter) ? t("audit.no_match") : t("audit.empty")}</EmptyState>
      ) : (
        <div className={selected ? "split" : undefined}>
          <RecordTable
            records={records ?? []}
            badSeq={badSeq}
            selected={selected}
            onSelect={setSelected}
            onLastRendered={setLastShown}
            handle={virtRef}
            footer={
              more && (
                <button onClick={() => void older()} className="load-more">
                  {t("audit.load_older")}
                </button>
              )
            }
          />
          {selected && <RecordDetail r={selected} onClose={() => setSelected(null)} />}
        </div>
      )}
      <Checkpoints />
      {rotate && <RotateKeyDialog onClose={() => setRotate(false)} />}
    </div>
  );
}
