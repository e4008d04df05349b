// The detail pane of the key picked in the Keys view: every attribute decoded, the
// public key's export, the certificate, and what can be changed.
import { useEffect, useState } from "react";
import { useTranslation } from "react-i18next";
import type { AttributeView } from "../../bindings";
import { Badge, ErrorBox } from "../../components";
import { textOf } from "../../i18n";
import { api } from "../../ipc";
import { useJumps, usePartition, useToast } from "../../state";
import { useCommand } from "../../useCommand";
import { permission } from "../credentials/roles";
import { AttributesDialog } from "../attributes/Attributes";
import { Kcv, WrapDialog } from "../backup/Backup";
import { CertificatePane } from "../objects/CertificatePane";
import { UriPane } from "../objects/UriPane";
import { KeyFormats } from "./KeyFormats";
import { classLabel } from "./KeyTable";
import { KeySuccession } from "./KeySuccession";
import { UsageLine } from "../usage/Usage";
import { PublicKeyExport } from "./KeyExport";

export function AttrValue({ a }: { a: AttributeView }) {
  const { t } = useTranslation();
  if (a.status !== "value") return <span className="muted">({a.status})</span>;
  const v = a.value ?? "";
  switch (a.display) {
    case "bool":
      return <Badge tone={v === "true" ? "ok" : "neutral"}>{v}</Badge>;
    case "hex":
      return v === "" ? (
        <span className="muted">{t("keys.empty_value")}</span>
      ) : (
        <code className="hex" title={v}>
          {v.length > 96 ? `${v.slice(0, 96)}… (${t("generate.bytes", { bytes: v.length / 2 })})` : v}
        </code>
      );
    case "name":
      return <code>{v}</code>;
    default:
      return <span>{v}</span>;
  }
}

export function DetailsPane({ partitionId, handle, onChanged }: { partitionId: string; handle: number; onChanged: () => void }) {
  const { t } = useTranslation();
  const { showAudit } = useJumps();
  const toast = useToast();
  const { partition } = usePartition();
  const canEdit = permission(partition, "edit_attributes");
  const [editing, setEditing] = useState(false);
  const [wrapping, setWrapping] = useState(false);
  const { run: loadDetails, data: d, error } = useCommand(api.keyDetails);
  const isLuna = usePartition().partition?.luna != null;
  // Remounted (key) for every key shown, so no state to reset here.
  useEffect(() => {
    void loadDetails(partitionId, handle);
  }, [loadDetails, partitionId, handle]);
  if (error) return <ErrorBox error={error} />;
  if (!d) return <p className="muted">{t("keys.reading_attributes")}</p>;
  return (
    <div className="details" data-testid="key-details">
      <h2>{d.summary.label || <span className="muted">{t("connections.no_label")}</span>}</h2>
      <p className="muted">
        {t("keys.detail_line", {
          class: classLabel(d.summary.class),
          algorithm: d.summary.algorithm || d.summary.key_type,
          handle: d.summary.handle,
        })}
      </p>
      {d.summary.duplicate_label && (
        <ErrorBox
          error={{
            code: "INVALID_INPUT",
            message: t("keys.duplicate_label"),
            details: t("keys.duplicate_label_details", { id: d.summary.id_hex }),
            suggestion: null,
            pkcs11: null,
          }}
        />
      )}
      {d.summary.id_hex && (
        <button onClick={() => showAudit(d.summary.id_hex)} data-testid="key-audit-records">
          {t("keys.audit_records")}
        </button>
      )}
      <button
        onClick={() => setEditing(true)}
        disabled={!canEdit?.allowed}
        title={canEdit?.allowed || !canEdit?.reason ? undefined : textOf(canEdit.reason)}
        data-testid="edit-attributes"
      >
        {t("keys.edit_attributes")}
      </button>
      {editing && (
        <AttributesDialog
          partitionId={partitionId}
          handle={handle}
          onClose={() => setEditing(false)}
          onChanged={(r) => {
            toast(
              "ok",
              r.moved.length
                ? t("keys.attributes_changed_moved", { changed: r.changed.join(", "), moved: r.moved.join(", ") })
                : t("keys.attributes_changed", { changed: r.changed.join(", ") }),
            );
            void loadDetails(partitionId, handle);
            onChanged();
          }}
        />
      )}
      {(d.summary.class === "SECRET_KEY" || d.summary.class === "PRIVATE_KEY") && (
        <button onClick={() => setWrapping(true)} data-testid="wrap-key">
          {t("keys.wrap")}
        </button>
      )}
      {wrapping && <WrapDialog partitionId={partitionId} details={d} onClose={() => setWrapping(false)} />}
      {d.summary.class === "SECRET_KEY" && (d.summary.key_type === "AES" || d.summary.key_type === "GENERIC_SECRET") && (
        <Kcv partitionId={partitionId} handle={d.summary.handle} />
      )}
      {/* The URI names the label and ID: read again when an edit changes them. */}
      <UriPane key={`${d.summary.label}/${d.summary.id_hex}`} partitionId={partitionId} handle={d.summary.handle} />
      <PublicKeyExport partitionId={partitionId} details={d} />
      {d.summary.class === "CERTIFICATE" && <CertificatePane partitionId={partitionId} handle={d.summary.handle} label={d.summary.label} />}
      {d.summary.class === "PRIVATE_KEY" && d.summary.capabilities.sign && <KeyFormats partitionId={partitionId} details={d} />}
      {d.summary.class === "PRIVATE_KEY" && d.summary.capabilities.sign && <KeySuccession partitionId={partitionId} details={d} />}
      {isLuna && <UsageLine partitionId={partitionId} summary={d.summary} onChanged={() => void loadDetails(partitionId, handle)} />}
      <table className="table compact attrs">
        <tbody>
          {d.attributes.map((a) => (
            <tr key={a.code}>
              <th scope="row" title={`0x${a.code.toString(16)}`}>
                {a.attribute}
              </th>
              <td>
                <AttrValue a={a} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
