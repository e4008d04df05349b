//! The descriptions of commands and events, and the files generated from them (tests and
//! `make bindings` only: nothing of this is in the app).

use std::any::TypeId;
use std::collections::{BTreeMap, HashSet};

use ts_rs::{Config, TypeVisitor, TS};

/// Implemented by the marker type `#[ipc_macros::command]` puts beside each command.
pub trait Command {
    fn signature() -> Signature;
}

/// What one command exchanges with the page.
pub struct Signature {
    pub name: &'static str,
    pub doc: &'static str,
    pub args: Vec<Arg>,
    pub result: TsType,
}

pub enum ArgKind {
    /// A value the page sends.
    Value,
    /// A `Channel<T>`: the page passes a callback, the command streams `T`s to it.
    Channel,
}

pub struct Arg {
    /// The Rust name; the page sends it in camelCase (Tauri's default).
    pub name: &'static str,
    pub kind: ArgKind,
    pub ty: TsType,
}

impl Arg {
    pub fn value<T: TS + 'static>(name: &'static str) -> Arg {
        Arg {
            name,
            kind: ArgKind::Value,
            ty: TsType::of::<T>(),
        }
    }
    pub fn channel<T: TS + 'static>(name: &'static str) -> Arg {
        Arg {
            name,
            kind: ArgKind::Channel,
            ty: TsType::of::<T>(),
        }
    }
    /// The name as the page writes it.
    pub fn js_name(&self) -> String {
        camel_case(self.name)
    }
}

/// A Rust type as TypeScript sees it: its name, and a way to reach every type it uses.
#[derive(Clone, Copy)]
pub struct TsType {
    name: fn(&Config) -> String,
    visit: fn(&mut Collector<'_>),
}

impl TsType {
    pub fn of<T: TS + 'static>() -> TsType {
        TsType {
            name: |cfg| T::name(cfg),
            visit: |c| {
                T::visit_dependencies(c);
                T::visit_generics(c);
                c.visit::<T>();
            },
        }
    }
    pub fn name(&self, cfg: &Config) -> String {
        (self.name)(cfg)
    }
}

/// An event the window listens for: its name and payload type.
pub struct EventSpec {
    pub name: &'static str,
    pub doc: &'static str,
    pub payload: TsType,
}

/// Every event the backend emits to the window.
pub fn events() -> Vec<EventSpec> {
    vec![EventSpec {
        name: super::CONSOLE_EVENT,
        doc: "Changes the window should show: audit records, partitions, the trail's key.",
        payload: TsType::of::<console::views::ConsoleEvent>(),
    }]
}

/// Collects the declarations of every exportable type reachable from the surface.
pub struct Collector<'a> {
    cfg: &'a Config,
    seen: HashSet<TypeId>,
    names: BTreeMap<String, TypeId>,
    decls: BTreeMap<String, String>,
}

impl TypeVisitor for Collector<'_> {
    fn visit<T: TS + 'static + ?Sized>(&mut self) {
        if T::output_path().is_none() || !self.seen.insert(TypeId::of::<T>()) {
            return;
        }
        // Two Rust types of one name would leave the page one of them: rename one
        // (`#[ts(rename = "...")]`).
        let ident = T::ident(self.cfg);
        if let Some(other) = self.names.insert(ident.clone(), TypeId::of::<T>()) {
            assert_eq!(
                other,
                TypeId::of::<T>(),
                "two types named {ident} cross IPC"
            );
        }
        self.decls.insert(ident, T::decl(self.cfg));
        T::visit_dependencies(self);
    }
}

fn config() -> Config {
    // JavaScript numbers hold every integer the console sends (handles, counters, sizes)
    // exactly up to 2^53; none comes close.
    Config::new().with_large_int("number")
}

const HEADER: &str = "// Generated from the Rust side by `src-tauri/src/ipc.rs`. Do not edit:\n// run `make bindings` after changing a command or a type that crosses IPC.\n";

/// The declaration of every exportable type the commands and events use, by name.
fn declarations(cfg: &Config, commands: &[Signature]) -> BTreeMap<String, String> {
    let mut c = Collector {
        cfg,
        seen: HashSet::new(),
        names: BTreeMap::new(),
        decls: BTreeMap::new(),
    };
    for s in commands {
        for a in &s.args {
            (a.ty.visit)(&mut c);
        }
        (s.result.visit)(&mut c);
    }
    for e in events() {
        (e.payload.visit)(&mut c);
    }
    c.decls
}

/// `ui/src/bindings.ts`: every type the commands and events use, sorted by name.
pub fn bindings_ts(commands: &[Signature]) -> String {
    let cfg = config();
    let mut out = format!("{HEADER}\n");
    for d in declarations(&cfg, commands).values() {
        out.push_str("export ");
        out.push_str(d);
        out.push_str("\n\n");
    }
    out.truncate(out.trim_end().len());
    out.push('\n');
    out
}

fn camel_case(snake: &str) -> String {
    let mut out = String::new();
    let mut upper = false;
    for ch in snake.chars() {
        if ch == '_' {
            upper = true;
        } else if upper {
            out.extend(ch.to_uppercase());
            upper = false;
        } else {
            out.push(ch);
        }
    }
    out
}

fn jsdoc(doc: &str, indent: &str) -> String {
    if doc.is_empty() {
        return String::new();
    }
    if !doc.contains('\n') {
        return format!("{indent}/** {doc} */\n");
    }
    let mut s = format!("{indent}/**\n");
    for line in doc.lines() {
        s.push_str(&format!("{indent} * {}\n", line.trim()).replace(" * \n", " *\n"));
    }
    s.push_str(&format!("{indent} */\n"));
    s
}

/// The names `commands.ts` imports from `bindings.ts`: identifiers in the types it writes.
fn imported_names(text: &str, declared: &BTreeMap<String, String>) -> Vec<String> {
    let mut names: Vec<String> = declared
        .keys()
        .filter(|n| {
            text.match_indices(n.as_str()).any(|(i, _)| {
                let before = text[..i].chars().next_back();
                let after = text[i + n.len()..].chars().next();
                let ident = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
                !ident(before) && !ident(after)
            })
        })
        .cloned()
        .collect();
    names.sort();
    names
}

/// `ui/src/commands.ts`: the `Commands` and `Events` maps and a typed function per command.
pub fn commands_ts(commands: &[Signature]) -> String {
    let cfg = config();
    let mut map = String::from(
        "/** Every IPC command: the arguments the page sends (camelCase) and the result. */\nexport interface Commands {\n",
    );
    let mut fns = String::from(
        "/** A typed function per command, over an invoker (`ipc.ts` passes Tauri's, with errors mapped). */\nexport function commandFunctions(invoke: Invoker) {\n  return {\n",
    );
    for s in commands {
        let args: Vec<String> = s
            .args
            .iter()
            .map(|a| match a.kind {
                ArgKind::Value => format!("{}: {}", a.js_name(), a.ty.name(&cfg)),
                ArgKind::Channel => format!("{}: Channel<{}>", a.js_name(), a.ty.name(&cfg)),
            })
            .collect();
        map.push_str(&jsdoc(s.doc, "  "));
        let args = if args.is_empty() {
            "{}".to_string()
        } else {
            format!("{{ {} }}", args.join("; "))
        };
        map.push_str(&format!(
            "  {}: {{ args: {args}; result: {} }};\n",
            s.name,
            s.result.name(&cfg)
        ));
        let params: Vec<String> = s
            .args
            .iter()
            .map(|a| match a.kind {
                ArgKind::Value => format!("{}: {}", a.js_name(), a.ty.name(&cfg)),
                ArgKind::Channel => {
                    format!("{}: (message: {}) => void", a.js_name(), a.ty.name(&cfg))
                }
            })
            .collect();
        let sent: Vec<String> = s
            .args
            .iter()
            .map(|a| match a.kind {
                ArgKind::Value => a.js_name(),
                ArgKind::Channel => format!("{0}: channel({0})", a.js_name()),
            })
            .collect();
        fns.push_str(&jsdoc(s.doc, "    "));
        let sent = if sent.is_empty() {
            "{}".to_string()
        } else {
            format!("{{ {} }}", sent.join(", "))
        };
        fns.push_str(&format!(
            "    {}: ({}) => invoke(\"{}\", {sent}),\n",
            camel_case(s.name),
            params.join(", "),
            s.name,
        ));
    }
    map.push_str("}\n");
    fns.push_str("  };\n}\n");
    let mut events_map = String::from(
        "/** Every event the backend emits to the window, by name, with its payload. */\nexport interface Events {\n",
    );
    for e in events() {
        events_map.push_str(&jsdoc(e.doc, "  "));
        events_map.push_str(&format!("  \"{}\": {};\n", e.name, e.payload.name(&cfg)));
    }
    events_map.push_str("}\n");
    let names: Vec<String> = commands.iter().map(|s| format!("\"{}\"", s.name)).collect();
    let event_names: Vec<String> = events().iter().map(|e| format!("\"{}\"", e.name)).collect();
    let body = format!(
        "{map}\nexport type CommandName = keyof Commands;\n\n/** Every command, in the order the surface lists them. */\nexport const COMMAND_NAMES: readonly CommandName[] = [{}];\n\n{events_map}\nexport type EventName = keyof Events;\n\nexport const EVENT_NAMES: readonly EventName[] = [{}];\n\n/** Sends one command; resolves with its result or rejects with the backend's error. */\nexport type Invoker = <K extends CommandName>(command: K, args: Commands[K][\"args\"]) => Promise<Commands[K][\"result\"]>;\n\nfunction channel<T>(onMessage: (message: T) => void): Channel<T> {{\n  const ch = new Channel<T>();\n  ch.onmessage = onMessage;\n  return ch;\n}}\n\n{fns}",
        names.join(", "),
        event_names.join(", ")
    );
    let imports = imported_names(&body, &declarations(&cfg, commands));
    format!(
        "{HEADER}\nimport {{ Channel }} from \"@tauri-apps/api/core\";\nimport type {{ {} }} from \"./bindings\";\n\n{body}",
        imports.join(", ")
    )
}

/// `permissions/console.toml`: one set granting exactly the surface's commands.
pub fn permissions_toml(commands: &[Signature]) -> String {
    let mut s = String::from(
        "# Generated from the Rust side by `src-tauri/src/ipc.rs` (`make bindings`); a test fails\n# when it is stale. Granted to the main window by capabilities/default.json.\n[[set]]\nidentifier = \"allow-console-commands\"\ndescription = \"Every command of the HSM console\"\npermissions = [\n",
    );
    for c in commands {
        s.push_str(&format!("  \"allow-{}\",\n", c.name.replace('_', "-")));
    }
    s.push_str("]\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each generated file is exactly what the Rust side describes.
    #[test]
    fn generated_ipc_files_are_current() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let surface = crate::commands::signatures();
        let files = [
            ("ui/src/bindings.ts", bindings_ts(&surface)),
            ("ui/src/commands.ts", commands_ts(&surface)),
            ("permissions/console.toml", permissions_toml(&surface)),
        ];
        let update = std::env::var_os("UPDATE_BINDINGS").is_some();
        let mut stale = Vec::new();
        for (path, fresh) in files {
            let path = root.join(path);
            if update {
                std::fs::write(&path, &fresh).unwrap();
            } else if std::fs::read_to_string(&path).unwrap_or_default() != fresh {
                stale.push(path.display().to_string());
            }
        }
        assert!(
            stale.is_empty(),
            "stale: {} — run `make bindings` and commit the result",
            stale.join(", ")
        );
    }

    /// Every function marked as a command in `commands/` is in the surface, once: one
    /// written but not listed would be neither registered nor generated.
    #[test]
    fn every_command_is_listed_once() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src-tauri/src/commands");
        let mut written = Vec::new();
        for entry in std::fs::read_dir(&dir).unwrap() {
            let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
            let mut rest = text.as_str();
            while let Some(i) = rest.find("#[ipc_macros::command]") {
                rest = &rest[i..];
                let f = rest.find("fn ").unwrap() + 3;
                let name: String = rest[f..]
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                written.push(name);
                rest = &rest[f..];
            }
        }
        let mut listed: Vec<String> = crate::commands::NAMES
            .iter()
            .map(|s| s.to_string())
            .collect();
        written.sort();
        listed.sort();
        assert_eq!(
            written, listed,
            "commands/surface.rs and the #[command] functions differ"
        );
    }

    #[test]
    fn names_in_camel_case() {
        assert_eq!(camel_case("partition_id"), "partitionId");
        assert_eq!(camel_case("on_event"), "onEvent");
        assert_eq!(camel_case("path"), "path");
    }
}
