//! The API stays compatible: `proto/fakesim` as built now is checked against the same files
//! before their last change (the last commit that changed them, or, when they are being changed
//! in the working tree, the commit checked out). A client built against the older files must
//! still be understood on the wire and in JSON: every message, field (number, name, type,
//! cardinality), enum value, service and method it knew is still there, or its number is
//! reserved. What a request *means* cannot be checked here; the API manual's compatibility
//! rules say how meanings change (in new fields).
//!
//! Written on the descriptors protox compiles (the same compiler the build uses) rather than
//! with `buf breaking`, which needs a binary from outside crates.io and PyPI; these are the wire
//! and JSON rules of buf's WIRE_JSON category that the API's files can break.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use prost::Message;
use prost_types::field_descriptor_proto::{Label, Type};
use prost_types::{DescriptorProto, EnumDescriptorProto, FileDescriptorSet, ServiceDescriptorProto};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The API's protos, relative to the repository root.
const PROTO_DIR: &str = "proto/fakesim";

/// One field as a client sees it on the wire and in JSON.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Field {
    name: String,
    kind: Type,
    type_name: String,
    label: Label,
    oneof: Option<String>,
}

/// Reserved numbers, as inclusive ranges.
type Reserved = Vec<(i32, i32)>;

/// A message's fields by number, with its reserved numbers and names.
type Fields = (BTreeMap<i32, Field>, Reserved, Vec<String>);

/// An enum's value names by number, with its reserved numbers.
type Values = (BTreeMap<i32, String>, Reserved);

/// The parts of an API a client depends on, by full name.
#[derive(Debug, Default)]
struct Api {
    /// Message name -> its fields.
    messages: BTreeMap<String, Fields>,
    /// Enum name -> its values.
    enums: BTreeMap<String, Values>,
    /// `service/method` -> (input, output, client streaming, server streaming).
    methods: BTreeMap<String, (String, String, bool, bool)>,
}

impl Api {
    fn of(set: &FileDescriptorSet) -> Api {
        let mut api = Api::default();
        for file in set.file.iter().filter(|f| f.package().starts_with("fakesim.")) {
            let scope = format!(".{}", file.package());
            for message in &file.message_type {
                api.message(&scope, message);
            }
            for e in &file.enum_type {
                api.enumeration(&scope, e);
            }
            for service in &file.service {
                api.service(&scope, service);
            }
        }
        api
    }

    fn message(&mut self, scope: &str, message: &DescriptorProto) {
        let name = format!("{scope}.{}", message.name());
        let oneofs: Vec<&str> = message.oneof_decl.iter().map(|o| o.name()).collect();
        let fields = message
            .field
            .iter()
            .map(|f| {
                let field = Field {
                    name: f.name().to_owned(),
                    kind: f.r#type(),
                    type_name: f.type_name().to_owned(),
                    label: f.label(),
                    // A proto3 `optional` is a synthetic oneof of its own: not a oneof to a client.
                    oneof: f
                        .oneof_index
                        .filter(|_| !f.proto3_optional())
                        .and_then(|i| oneofs.get(i as usize).map(|o| (*o).to_owned())),
                };
                (f.number(), field)
            })
            .collect();
        let reserved = message
            .reserved_range
            .iter()
            .map(|r| (r.start(), r.end() - 1))
            .collect();
        self.messages
            .insert(name.clone(), (fields, reserved, message.reserved_name.clone()));
        for nested in &message.nested_type {
            self.message(&name, nested);
        }
        for e in &message.enum_type {
            self.enumeration(&name, e);
        }
    }

    fn enumeration(&mut self, scope: &str, e: &EnumDescriptorProto) {
        let values = e.value.iter().map(|v| (v.number(), v.name().to_owned())).collect();
        let reserved = e.reserved_range.iter().map(|r| (r.start(), r.end())).collect();
        self.enums.insert(format!("{scope}.{}", e.name()), (values, reserved));
    }

    fn service(&mut self, scope: &str, service: &ServiceDescriptorProto) {
        for method in &service.method {
            self.methods.insert(
                format!("{scope}.{}/{}", service.name(), method.name()),
                (
                    method.input_type().to_owned(),
                    method.output_type().to_owned(),
                    method.client_streaming(),
                    method.server_streaming(),
                ),
            );
        }
    }
}

/// What `new` breaks of `old`, one line each.
fn breaks(old: &Api, new: &Api) -> Vec<String> {
    let reserved = |ranges: &[(i32, i32)], n: i32| ranges.iter().any(|&(lo, hi)| (lo..=hi).contains(&n));
    let mut found = Vec::new();
    for (name, (fields, _, _)) in &old.messages {
        let Some((now, now_reserved, now_names)) = new.messages.get(name) else {
            found.push(format!("message {name} was removed"));
            continue;
        };
        for (number, field) in fields {
            match now.get(number) {
                Some(f) if f == field => {}
                Some(f) => found.push(format!("{name} field {number}: was {field:?}, is {f:?}")),
                None if reserved(now_reserved, *number) && now_names.contains(&field.name) => {}
                None => found.push(format!(
                    "{name} field {number} ({}) was removed without reserving its number and name",
                    field.name
                )),
            }
        }
    }
    for (name, (values, _)) in &old.enums {
        let Some((now, now_reserved)) = new.enums.get(name) else {
            found.push(format!("enum {name} was removed"));
            continue;
        };
        for (number, value) in values {
            match now.get(number) {
                Some(v) if v == value => {}
                Some(v) => found.push(format!("{name} value {number}: was {value}, is {v}")),
                None if reserved(now_reserved, *number) => {}
                None => found.push(format!(
                    "{name} value {number} ({value}) was removed without reserving it"
                )),
            }
        }
    }
    for (name, method) in &old.methods {
        match new.methods.get(name) {
            Some(m) if m == method => {}
            Some(m) => found.push(format!("method {name}: was {method:?}, is {m:?}")),
            None => found.push(format!("method {name} was removed")),
        }
    }
    found
}

/// Compiles every `.proto` under `root` (an include root) with protox.
fn compile(root: &Path) -> FileDescriptorSet {
    let mut files = Vec::new();
    let mut dirs = vec![root.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "proto") {
                files.push(path.strip_prefix(root).unwrap().to_path_buf());
            }
        }
    }
    files.sort();
    let mut compiler = protox::Compiler::new([root]).unwrap();
    compiler.open_files(&files).unwrap();
    compiler.file_descriptor_set()
}

fn git(repo: &Path, args: &[&str]) -> (bool, String) {
    let out = Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(args)
        .output()
        .expect("git runs (the compatibility check reads the protos' history)");
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The commit whose protos the working tree's must stay compatible with: the one checked out
/// when they are being changed, else the one before their last change; `None` when they have
/// no earlier version.
fn base(repo: &Path) -> Option<String> {
    let (clean, _) = git(repo, &["diff", "--quiet", "HEAD", "--", PROTO_DIR]);
    let (_, untracked) = git(repo, &["ls-files", "--others", "--exclude-standard", "--", PROTO_DIR]);
    if !clean || !untracked.trim().is_empty() {
        return Some("HEAD".to_owned());
    }
    let (ok, last) = git(repo, &["log", "-1", "--format=%H", "--", PROTO_DIR]);
    assert!(
        ok,
        "git log fails in {}: is this a clone with its history?",
        repo.display()
    );
    let last = last.trim();
    let (has_parent, parent) = git(repo, &["rev-parse", "--verify", "--quiet", &format!("{last}^")]);
    has_parent.then(|| parent.trim().to_owned())
}

/// The protos of `commit` written under a new directory, `None` if it had none.
fn checkout(repo: &Path, commit: &str, into: &Path) -> Option<PathBuf> {
    let (_, names) = git(repo, &["ls-tree", "-r", "--name-only", commit, "--", PROTO_DIR]);
    let names: Vec<&str> = names.lines().filter(|n| n.ends_with(".proto")).collect();
    if names.is_empty() {
        return None;
    }
    for name in names {
        let (ok, text) = git(repo, &["show", &format!("{commit}:{name}")]);
        assert!(ok, "cannot read {name} at {commit}");
        let path = into.join(name.strip_prefix("proto/").unwrap());
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    Some(into.to_path_buf())
}

#[test]
fn the_protos_keep_every_message_field_enum_value_and_method_of_their_previous_version() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let now = Api::of(&FileDescriptorSet::decode(fakesim_proto::FILE_DESCRIPTOR_SET).unwrap());
    assert!(now.methods.len() > 10, "the API as built: {:?}", now.methods.keys());
    let Some(base) = base(repo) else {
        eprintln!("the protos have no earlier version to stay compatible with");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let Some(root) = checkout(repo, &base, dir.path()) else {
        eprintln!("no protos at {base}");
        return;
    };
    let before = Api::of(&compile(&root));
    let found = breaks(&before, &now);
    assert!(
        found.is_empty(),
        "the protos break clients of their version at {base}:\n{}",
        found.join("\n")
    );
    eprintln!(
        "compatible with {base}: {} messages, {} enums, {} methods checked",
        before.messages.len(),
        before.enums.len(),
        before.methods.len()
    );
}

#[test]
fn the_check_reports_each_kind_of_break() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| {
        let path = dir.path().join(name).join("fakesim/v1/a.proto");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        compile(&dir.path().join(name))
    };
    let old = write(
        "old",
        r#"syntax = "proto3"; package fakesim.v1;
        message A { int32 kept = 1; int32 dropped = 2; string retyped = 3; int32 renamed = 4; int32 gone = 5; }
        message B {}
        enum E { E_UNSPECIFIED = 0; E_ONE = 1; E_TWO = 2; }
        service S { rpc Call(A) returns (A); rpc Other(A) returns (B); }"#,
    );
    let new = write(
        "new",
        r#"syntax = "proto3"; package fakesim.v1;
        message A { int32 kept = 1; bytes retyped = 3; int32 new_name = 4; reserved 5; reserved "gone"; int32 added = 6; }
        enum E { E_UNSPECIFIED = 0; E_ONE = 1; }
        service S { rpc Call(A) returns (stream A); }"#,
    );
    let found = breaks(&Api::of(&old), &Api::of(&new));
    let has = |text: &str| found.iter().any(|line| line.contains(text));
    assert!(has("field 2 (dropped) was removed"), "{found:#?}");
    assert!(has("field 3: was"), "{found:#?}");
    assert!(has("field 4: was"), "{found:#?}");
    assert!(has("message .fakesim.v1.B was removed"), "{found:#?}");
    assert!(has("value 2 (E_TWO)"), "{found:#?}");
    assert!(has("method .fakesim.v1.S/Call"), "{found:#?}");
    assert!(has("method .fakesim.v1.S/Other was removed"), "{found:#?}");
    assert_eq!(
        found.len(),
        7,
        "a reserved field and an added one are no break: {found:#?}"
    );
    assert!(breaks(&Api::of(&old), &Api::of(&old)).is_empty());
}
