//! `#[ipc_macros::command]` turns a function into a Tauri command (it adds
//! `#[tauri::command]`) and, beside it, a unit type of the same name implementing
//! `crate::ipc::Command`, whose `signature()` says what crosses IPC: the command's name, its
//! documentation, each argument the page sends (name and Rust type; Tauri-injected ones such
//! as `State` skipped, `Channel<T>` marked as a channel of `T`), and the result type (the `T`
//! of `Result<T, _>`). The app's command list, its permission set and the UI's TypeScript
//! command functions are all generated from these descriptions — a command is written once.
//!
//! Why not tauri-specta: it would replace ts-rs (which every IPC type already derives) with
//! specta across six crates, and ties the app to a release-candidate pair of crates. This
//! macro is ~150 lines and keeps ts-rs as the one source of the TypeScript types.

use proc_macro::TokenStream;
use quote::{format_ident, quote};
use syn::{
    parse_macro_input, FnArg, GenericArgument, ItemFn, Pat, PathArguments, ReturnType, Type,
};

/// Arguments Tauri fills in itself; the page never sends them.
const INJECTED: &[&str] = &["State", "AppHandle", "Window", "Webview", "WebviewWindow"];
/// Result aliases whose first type argument is what the page receives.
const RESULTS: &[&str] = &["Result", "Cmd", "ApiResult"];

/// The last path segment of a type (`tauri::State<'_, X>` → `State`) and its arguments.
fn last_segment(ty: &Type) -> Option<&syn::PathSegment> {
    match ty {
        Type::Path(p) => p.path.segments.last(),
        _ => None,
    }
}

/// The first type argument of a path segment (`Channel<T>` → `T`).
fn first_type_arg(seg: &syn::PathSegment) -> Option<&Type> {
    match &seg.arguments {
        PathArguments::AngleBracketed(a) => a.args.iter().find_map(|g| match g {
            GenericArgument::Type(t) => Some(t),
            _ => None,
        }),
        _ => None,
    }
}

fn docs(f: &ItemFn) -> String {
    f.attrs
        .iter()
        .filter(|a| a.path().is_ident("doc"))
        .filter_map(|a| match &a.meta {
            syn::Meta::NameValue(nv) => match &nv.value {
                syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(s),
                    ..
                }) => Some(s.value().trim().to_string()),
                _ => None,
            },
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[proc_macro_attribute]
pub fn command(attr: TokenStream, item: TokenStream) -> TokenStream {
    if !attr.is_empty() {
        return syn::Error::new(
            proc_macro2::Span::call_site(),
            "#[command] takes no arguments",
        )
        .to_compile_error()
        .into();
    }
    let f = parse_macro_input!(item as ItemFn);
    let name = &f.sig.ident;
    let vis = &f.vis;
    let doc = docs(&f);
    let mut args = Vec::new();
    for input in &f.sig.inputs {
        let FnArg::Typed(pt) = input else {
            return syn::Error::new_spanned(input, "a command takes no self")
                .to_compile_error()
                .into();
        };
        let Pat::Ident(pi) = &*pt.pat else {
            return syn::Error::new_spanned(&pt.pat, "command arguments need plain names")
                .to_compile_error()
                .into();
        };
        let arg = pi.ident.to_string();
        let ty = &*pt.ty;
        match last_segment(ty) {
            Some(seg) if INJECTED.contains(&seg.ident.to_string().as_str()) => {}
            Some(seg) if seg.ident == "Channel" => {
                let Some(inner) = first_type_arg(seg) else {
                    return syn::Error::new_spanned(ty, "Channel needs its message type")
                        .to_compile_error()
                        .into();
                };
                args.push(quote! { crate::ipc::Arg::channel::<#inner>(#arg) });
            }
            _ => args.push(quote! { crate::ipc::Arg::value::<#ty>(#arg) }),
        }
    }
    let result = match &f.sig.output {
        ReturnType::Default => quote! { () },
        ReturnType::Type(_, ty) => match last_segment(ty) {
            Some(seg) if RESULTS.contains(&seg.ident.to_string().as_str()) => {
                match first_type_arg(seg) {
                    Some(t) => quote! { #t },
                    None => quote! { #ty },
                }
            }
            _ => quote! { #ty },
        },
    };
    let marker = format_ident!("{}", name);
    let name_str = name.to_string();
    quote! {
        #[tauri::command]
        #f

        /// The IPC description of the command of the same name (for the generators, which
        /// run as tests).
        #[cfg(test)]
        #[allow(non_camel_case_types)]
        #[doc(hidden)]
        #vis struct #marker {}

        #[cfg(test)]
        impl crate::ipc::Command for #marker {
            fn signature() -> crate::ipc::Signature {
                crate::ipc::Signature {
                    name: #name_str,
                    doc: #doc,
                    args: ::std::vec![#(#args),*],
                    result: crate::ipc::TsType::of::<#result>(),
                }
            }
        }
    }
    .into()
}
