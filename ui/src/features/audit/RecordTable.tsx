// The trail's records, newest first: a row per record (100,000 scroll as one list, older
// pages loaded as the table nears its end), the broken one marked, a click shows one.
import type { ReactNode, Ref } from "react";
import { useTranslation } from "react-i18next";
import type { RecordView } from "../../bindings";
import { Badge } from "../../components";
import { VirtualTable, type Column, type VirtualTableHandle } from "../../components/VirtualTable";

const ROW = 32;

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

export function RecordTable({
  records,
  badSeq,
  selected,
  onSelect,
  footer,
  onLastRendered,
  handle,
}: {
  records: RecordView[];
  /// The first record verification found broken.
  badSeq: number | null;
  selected: RecordView | null;
  onSelect: (r: RecordView) => void;
  footer: ReactNode;
  onLastRendered: (index: number) => void;
  handle: Ref<VirtualTableHandle>;
}) {
  const { t } = useTranslation();
  const columns: Column<RecordView>[] = [
    { header: "#", cell: (r) => r.seq },
    { header: t("audit.col_time"), className: "mono", cell: (r) => r.timestamp.replace("T", " ").replace("Z", "") },
    { header: t("audit.col_action"), cell: (r) => r.action },
    { header: t("audit.col_resource"), className: "ellipsis", title: (r) => r.resource_id ?? "", cell: (r) => r.resource_id },
    {
      header: t("audit.col_status"),
      cell: (r) => (
        <Badge tone={r.status === "success" ? "ok" : r.status === "failure" ? "bad" : "warn"}>
          {r.status === "success" || r.status === "failure" || r.status === "warning" || r.status === "unknown"
            ? t(`audit.status_${r.status}`)
            : r.status}
        </Badge>
      ),
    },
    { header: t("audit.col_actor"), className: "ellipsis", cell: (r) => r.actor_id },
    { header: t("audit.col_details"), cell: (r) => <Metadata json={r.metadata} /> },
  ];
  const rowClass = (r: RecordView) => `status-${r.status}${r.seq === badSeq ? " bad-record" : ""}`;
  const rowData = (r: RecordView) => ({ "data-action": r.action, "data-seq": r.seq, "data-bad": r.seq === badSeq ? "true" : undefined });
  return (
    <VirtualTable
      kind="record"
      label={t("audit.records_label")}
      testId="audit-records"
      rowTestId="audit-row"
      rows={records}
      columns={columns}
      rowKey={(r) => r.seq}
      rowHeight={ROW}
      activeKey={selected?.seq ?? null}
      onRowClick={onSelect}
      rowClass={rowClass}
      rowData={rowData}
      footer={footer}
      onLastRendered={onLastRendered}
      handle={handle}
    />
  );
}
