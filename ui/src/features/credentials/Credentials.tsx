// Credentials and roles: change my PIN, set another role's PIN, initialize the token. The
// PIN fields are cleared as soon as a call is made; a new PIN is typed twice and checked
// against the token's length range here and again in the backend, before it is sent.
import { useState } from "react";
import { useTranslation } from "react-i18next";
import type { PartitionView } from "../../bindings";
import { Badge } from "../../components";
import { roleNames, roleNameText, permission, RoleButton } from "./roles";
import { ChangePinDialog, SetPinDialog } from "./PinDialogs";
import { InitTokenDialog } from "./InitTokenDialog";

type Open = null | { kind: "change" } | { kind: "set"; target: "user" | "crypto_user" | "limited_crypto_officer" } | { kind: "init" };
const OPEN_CHANGE: Open = { kind: "change" };
const OPEN_SET_USER: Open = { kind: "set", target: "user" };
const OPEN_SET_CU: Open = { kind: "set", target: "crypto_user" };
const OPEN_SET_LCO: Open = { kind: "set", target: "limited_crypto_officer" };
const OPEN_INIT: Open = { kind: "init" };

/// The Partition view's card: who is logged in, the PIN states, and the credential actions,
/// each disabled with the reason when the role may not.
export function CredentialsCard({ p }: { p: PartitionView }) {
  const { t: tr } = useTranslation();
  const [open, setOpen] = useState<Open>(null);
  const t = p.token;
  const luna = p.roles.includes("crypto_user");
  const names = roleNames();
  const perms = {
    change: permission(p, "change_own_pin"),
    setUser: permission(p, "set_user_pin"),
    setRole: permission(p, "set_role_pin"),
    init: permission(p, "init_token"),
  };
  return (
    <section className="card" data-testid="credentials-card">
      <h2>{tr("credentials.title")}</h2>
      <p>
        {p.logged_in ? (
          <Badge tone="ok">{tr("app.role_logged_in", { role: roleNameText(p.role_name) })}</Badge>
        ) : (
          <Badge>{tr("common.not_logged_in")}</Badge>
        )}{" "}
        {t.user_pin_to_be_changed && <Badge tone="warn">{tr("credentials.user_pin_must_change")}</Badge>}
        {t.so_pin_to_be_changed && <Badge tone="warn">{tr("credentials.so_pin_must_change")}</Badge>}
        {t.user_pin_locked && <Badge tone="bad">{tr("credentials.user_pin_locked")}</Badge>}
        {!t.user_pin_initialized && <Badge tone="warn">{tr("credentials.no_user_pin")}</Badge>}
      </p>
      <p className="muted small">
        {tr("credentials.pins_and_roles", {
          min: t.min_pin_len,
          max: t.max_pin_len,
          roles: p.roles.map((r) => names[r]).join(tr("credentials.list_separator")),
        })}
      </p>
      <div className="button-row wrap">
        <RoleButton perm={perms.change} onClick={() => setOpen(OPEN_CHANGE)} testId="change-pin">
          {tr("credentials.change_my_pin")}
        </RoleButton>
        <RoleButton perm={perms.setUser} onClick={() => setOpen(OPEN_SET_USER)} testId="set-user-pin">
          {tr("credentials.set_user_pin")}
        </RoleButton>
        {luna && (
          <>
            <RoleButton perm={perms.setRole} onClick={() => setOpen(OPEN_SET_CU)} testId="set-cu-pin">
              {tr("credentials.set_cu_pin")}
            </RoleButton>
            <RoleButton perm={perms.setRole} onClick={() => setOpen(OPEN_SET_LCO)}>
              {tr("credentials.set_lco_pin")}
            </RoleButton>
          </>
        )}
        <RoleButton perm={perms.init} onClick={() => setOpen(OPEN_INIT)} className="danger" testId="init-token">
          {tr("credentials.init_token")}
        </RoleButton>
      </div>
      {open?.kind === "change" && p.logged_in && (
        <ChangePinDialog partitionId={p.id} token={t} user={p.logged_in} onClose={() => setOpen(null)} />
      )}
      {open?.kind === "set" && <SetPinDialog partitionId={p.id} token={t} target={open.target} onClose={() => setOpen(null)} />}
      {open?.kind === "init" && <InitTokenDialog partitionId={p.id} onClose={() => setOpen(null)} />}
    </section>
  );
}
