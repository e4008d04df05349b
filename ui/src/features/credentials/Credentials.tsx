// Credentials and roles: change my PIN, set another role's PIN, initialize the token. The
// PIN fields are cleared as soon as a call is made; a new PIN is typed twice and checked
// against the token's length range here and again in the backend, before it is sent.
import { useEffect, useState, type ReactNode } from "react";
import { Trans, useTranslation } from "react-i18next";
import type { Action, PartitionView, Permission, TokenView, UserKind } from "../../bindings";
import { Badge, Dialog, ErrorBox, Field } from "../../components";
import i18n, { textOf } from "../../i18n";
import { api } from "../../ipc";
import { useAuditActions, useConnectionsActions, usePartitionActions, useToast } from "../../state";
import { useCommand } from "../../useCommand";

/// The roles by kind, in the window's language (the login dialog's choices).
export function roleNames(): Record<UserKind, string> {
  const tr = i18n.t;
  return {
    user: tr("roles.user"),
    crypto_user: tr("roles.crypto_user"),
    limited_crypto_officer: tr("roles.limited_crypto_officer"),
    so: tr("roles.so"),
  };
}

/// The backend's role names (`PartitionView.role_name`, hsm::roles::Role::name) as the
/// catalogs have them; an unknown one as it came.
const ROLE_NAME_KEYS = {
  "Partition Security Officer": "roles.partition_so",
  "security officer": "roles.security_officer",
  "Crypto Officer": "roles.crypto_officer",
  user: "roles.plain_user",
  "Crypto User": "roles.crypto_user",
  "Limited Crypto Officer": "roles.limited_crypto_officer",
} as const;

export function roleNameText(name: string | null | undefined): string {
  if (!name) return "";
  const key = ROLE_NAME_KEYS[name as keyof typeof ROLE_NAME_KEYS];
  return key ? i18n.t(key) : name;
}

export function permission(p: PartitionView | null, action: Action): Permission | undefined {
  return p?.permissions.find((x) => x.action === action);
}

/// A button for an action the role may or may not do: disabled with the reason shown.
export function RoleButton({
  perm,
  onClick,
  children,
  className,
  testId,
}: {
  perm: Permission | undefined;
  onClick: () => void;
  children: ReactNode;
  className?: string;
  testId?: string;
}) {
  const allowed = perm?.allowed ?? false;
  return (
    <span className="role-action">
      <button
        className={className}
        onClick={onClick}
        disabled={!allowed}
        title={perm?.reason ? textOf(perm.reason) : undefined}
        data-testid={testId}
      >
        {children}
      </button>
      {!allowed && perm?.reason && <span className="muted small role-reason">{textOf(perm.reason)}</span>}
    </span>
  );
}

/// What a new PIN typed twice is missing, or null when it may be sent.
export function newPinProblem(pin: string, again: string, t: Pick<TokenView, "min_pin_len" | "max_pin_len">): string | null {
  const tr = i18n.t;
  if (!pin) return tr("credentials.type_new_pin");
  if (pin.length < t.min_pin_len) return tr("credentials.pin_too_short", { min: t.min_pin_len });
  if (t.max_pin_len > 0 && pin.length > t.max_pin_len) return tr("credentials.pin_too_long", { max: t.max_pin_len });
  if (pin !== again) return tr("credentials.pins_differ");
  return null;
}

function useRefresh() {
  const { refreshConnections } = useConnectionsActions();
  const { refreshPartition } = usePartitionActions();
  const { refreshAudit } = useAuditActions();
  return async () => {
    await Promise.all([refreshConnections(), refreshPartition(), refreshAudit()]);
  };
}

function NewPinFields({
  pin,
  again,
  setPin,
  setAgain,
  token,
}: {
  pin: string;
  again: string;
  setPin: (s: string) => void;
  setAgain: (s: string) => void;
  token: TokenView;
}) {
  const { t } = useTranslation();
  return (
    <>
      <Field label={t("credentials.new_pin")} hint={t("credentials.pin_range", { min: token.min_pin_len, max: token.max_pin_len })}>
        <input
          type="password"
          autoComplete="new-password"
          value={pin}
          onChange={(e) => setPin(e.target.value)}
          aria-label={t("credentials.new_pin")}
          data-testid="new-pin"
        />
      </Field>
      <Field label={t("credentials.new_pin_again")}>
        <input
          type="password"
          autoComplete="new-password"
          value={again}
          onChange={(e) => setAgain(e.target.value)}
          aria-label={t("credentials.new_pin_again")}
          data-testid="new-pin-again"
        />
      </Field>
    </>
  );
}

/// Change the PIN of the role logged in. `reason`: why the token wants it changed now.
export function ChangePinDialog({
  partitionId,
  token,
  user,
  reason,
  onClose,
}: {
  partitionId: string;
  token: TokenView;
  user: UserKind;
  reason?: string | null;
  onClose: () => void;
}) {
  const { t } = useTranslation();
  const toast = useToast();
  const refresh = useRefresh();
  const names = roleNames();
  const [old, setOld] = useState("");
  const [pin, setPin] = useState("");
  const [again, setAgain] = useState("");
  const problem = newPinProblem(pin, again, token);
  const changing = useCommand(async (o: string, n: string) => {
    const r = await api.changePin(partitionId, o, n);
    toast("ok", t("credentials.pin_changed", { role: names[user] }));
    if (r.audit.state === "unlocked") toast("info", t("credentials.audit_key_open"));
    await refresh();
    onClose();
  });
  const submit = async () => {
    if (problem || !old) return;
    const [o, n] = [old, pin];
    // The fields are cleared whatever happens; the PINs live only for this one call.
    setOld("");
    setPin("");
    setAgain("");
    await changing.run(o, n);
  };
  return (
    <Dialog
      title={t("credentials.change_title", { role: names[user] })}
      onClose={onClose}
      footer={
        <>
          <button onClick={onClose}>{reason ? t("credentials.later") : t("common.cancel")}</button>
          <button
            className="primary"
            onClick={() => void submit()}
            disabled={changing.loading || !old || problem !== null}
            data-testid="change-pin-submit"
          >
            {changing.loading ? t("credentials.changing") : t("credentials.change_pin")}
          </button>
        </>
      }
    >
      {reason && (
        <div className="notice warn" data-testid="pin-must-change">
          {reason}
        </div>
      )}
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void submit();
        }}
      >
        <Field label={t("credentials.current_pin")} hint={t("credentials.current_pin_hint")}>
          <input
            type="password"
            autoComplete="off"
            value={old}
            onChange={(e) => setOld(e.target.value)}
            aria-label={t("credentials.current_pin")}
            data-testid="old-pin"
          />
        </Field>
        <NewPinFields pin={pin} again={again} setPin={setPin} setAgain={setAgain} token={token} />
        {pin && problem && (
          <p className="muted small" data-testid="pin-problem">
            {problem}
          </p>
        )}
        <button type="submit" hidden aria-hidden="true" tabIndex={-1} />
      </form>
      {changing.error && <ErrorBox error={changing.error} title={t("credentials.not_changed")} />}
    </Dialog>
  );
}

/// The SO sets the user PIN, or the Crypto Officer a Luna role's PIN.
export function SetPinDialog({
  partitionId,
  token,
  target,
  onClose,
}: {
  partitionId: string;
  token: TokenView;
  target: "user" | "crypto_user" | "limited_crypto_officer";
  onClose: () => void;
}) {
  const { t } = useTranslation();
  const toast = useToast();
  const refresh = useRefresh();
  const names = roleNames();
  const [pin, setPin] = useState("");
  const [again, setAgain] = useState("");
  const problem = newPinProblem(pin, again, token);
  const setting = useCommand(async (n: string) => {
    if (target === "user") await api.setUserPin(partitionId, n);
    else await api.setRolePin(partitionId, target, n);
    toast("ok", t("credentials.pin_set", { role: names[target] }));
    await refresh();
    onClose();
  });
  const submit = async () => {
    if (problem) return;
    const n = pin;
    setPin("");
    setAgain("");
    await setting.run(n);
  };
  return (
    <Dialog
      title={t("credentials.set_title", { role: names[target] })}
      onClose={onClose}
      footer={
        <>
          <button onClick={onClose}>{t("common.cancel")}</button>
          <button
            className="primary"
            onClick={() => void submit()}
            disabled={setting.loading || problem !== null}
            data-testid="set-pin-submit"
          >
            {setting.loading ? t("credentials.setting") : t("credentials.set_pin")}
          </button>
        </>
      }
    >
      <p className="muted small">{target === "user" ? t("credentials.set_user_pin_text") : t("credentials.set_role_pin_text")}</p>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void submit();
        }}
      >
        <NewPinFields pin={pin} again={again} setPin={setPin} setAgain={setAgain} token={token} />
        {pin && problem && <p className="muted small">{problem}</p>}
        <button type="submit" hidden aria-hidden="true" tabIndex={-1} />
      </form>
      {setting.error && <ErrorBox error={setting.error} title={t("credentials.not_set")} />}
    </Dialog>
  );
}

/// Initialize the token: what it holds, the SO PIN, the new label, the old label typed, and
/// for the partition holding the audit trail's key, the second confirmation.
export function InitTokenDialog({ partitionId, onClose }: { partitionId: string; onClose: () => void }) {
  const { t } = useTranslation();
  const toast = useToast();
  const refresh = useRefresh();
  const { selectPartition } = usePartitionActions();
  const { run: load, data: contents, error: loadError } = useCommand(api.tokenContents);
  useEffect(() => {
    void load(partitionId);
  }, [load, partitionId]);
  const [soPin, setSoPin] = useState("");
  const [label, setLabel] = useState("");
  const [typed, setTyped] = useState("");
  const [auditToo, setAuditToo] = useState(false);
  const init = useCommand(async (pin: string) => {
    const r = await api.initToken(partitionId, pin, { label, confirmation: typed, destroy_audit_key: auditToo });
    toast("ok", t("credentials.initialized", { label: r.label, count: r.objects_destroyed }));
    if (r.partition_id) selectPartition(r.partition_id);
    await refresh();
    onClose();
  });
  const ready =
    contents !== null && soPin !== "" && label.trim() !== "" && typed === contents.confirmation && (!contents.holds_audit_key || auditToo);
  const submit = async () => {
    if (!ready) return;
    const pin = soPin;
    setSoPin("");
    await init.run(pin);
  };
  return (
    <Dialog
      title={t("credentials.init_title")}
      onClose={onClose}
      wide
      footer={
        <>
          <button onClick={onClose}>{t("common.cancel")}</button>
          <button className="danger" onClick={() => void submit()} disabled={init.loading || !ready} data-testid="init-token-submit">
            {init.loading ? t("credentials.initializing") : t("credentials.init_submit")}
          </button>
        </>
      }
    >
      {loadError && <ErrorBox error={loadError} />}
      {contents && (
        <>
          <p>
            <Trans
              i18nKey={
                contents.public_only && contents.reported_object_count === null ? "credentials.init_holds_public" : "credentials.init_holds"
              }
              values={{ label: contents.label, serial: contents.serial, n: contents.reported_object_count ?? contents.objects }}
              components={[<strong key="label" />, <strong key="count" data-testid="token-object-count" />]}
            />
          </p>
          {contents.by_class.length > 0 && (
            <ul className="delete-list">
              {contents.by_class.map((c) => (
                <li key={c.class}>
                  {c.count} × {objectClassName(c.class)}
                </li>
              ))}
            </ul>
          )}
          {contents.holds_audit_key && (
            <div className="notice warn" data-testid="audit-key-warning">
              <Badge tone="bad">{t("credentials.audit_trail")}</Badge> {t("credentials.holds_audit_key")}
              <label className="checkbox">
                <input type="checkbox" checked={auditToo} onChange={(e) => setAuditToo(e.target.checked)} data-testid="destroy-audit-key" />{" "}
                {t("credentials.destroy_audit_key")}
              </label>
            </div>
          )}
          <Field label={t("credentials.so_pin")}>
            <input
              type="password"
              autoComplete="off"
              value={soPin}
              onChange={(e) => setSoPin(e.target.value)}
              aria-label={t("credentials.so_pin")}
            />
          </Field>
          <Field label={t("credentials.new_label")} hint={t("credentials.new_label_hint")}>
            <input
              type="text"
              value={label}
              onChange={(e) => setLabel(e.target.value)}
              aria-label={t("credentials.new_label")}
              maxLength={32}
            />
          </Field>
          <Field label={t("credentials.type_to_confirm", { confirmation: contents.confirmation })}>
            <input
              type="text"
              value={typed}
              onChange={(e) => setTyped(e.target.value)}
              autoComplete="off"
              spellCheck={false}
              aria-label={t("credentials.confirmation")}
              data-testid="init-confirm"
            />
          </Field>
        </>
      )}
      {init.error && <ErrorBox error={init.error} title={t("credentials.not_initialized")} />}
    </Dialog>
  );
}

/// An object class (`CKO_*` without the prefix, as the backend counts them) in words.
export function objectClassName(c: string): string {
  const tr = i18n.t;
  switch (c) {
    case "PRIVATE_KEY":
      return tr("credentials.class_private_key");
    case "PUBLIC_KEY":
      return tr("credentials.class_public_key");
    case "SECRET_KEY":
      return tr("credentials.class_secret_key");
    case "CERTIFICATE":
      return tr("credentials.class_certificate");
    case "DATA":
      return tr("credentials.class_data");
    default:
      return c.toLowerCase().replace(/_/g, " ");
  }
}

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
