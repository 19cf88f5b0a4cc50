use super::*;

fn json(source: &[u8]) -> Result<String, Error> {
    let mut nodes = [Node::EMPTY; 256];
    let mut text = [0u8; 4096];
    let mut arena = Arena::new(&mut nodes, &mut text);
    let root = arena.parse(source)?;
    let mut out = String::new();
    write_json(arena.value(root), &mut out).unwrap();
    Ok(out)
}

fn error(source: &[u8]) -> (ErrorKind, u32, u32) {
    let e = json(source).unwrap_err();
    (e.kind, e.line, e.column)
}

const CLOUD_CONFIG: &[u8] = b"#cloud-config
# a comment line
hostname: web-1   # trailing comment
users:
  - default
  - name: alice
    sudo: ALL=(ALL) NOPASSWD:ALL
    groups: [wheel, 'adm']
    ssh_authorized_keys:
    - ssh-ed25519 AAAA alice@laptop
write_files:
- path: /etc/motd
  permissions: '0644'
  owner: 0755
  content: |
    Welcome.
      indented

    # not a comment
- {path: /etc/x, content: \"a\\tb\\n\"}
runcmd:
  - [sh, -c, echo hi]
  - echo \"quoted\" 'and' plain
package_update: yes
swap: {size: 1.5e+3, file: ~}
bootcmd:
  - >-
    folded
    into one

    line
";

#[test]
fn cloud_config_document() {
    assert_eq!(
        json(CLOUD_CONFIG).unwrap(),
        concat!(
            r#"{"hostname":"web-1","users":["default",{"name":"alice","sudo":"ALL=(ALL) NOPASSWD:ALL","groups":["wheel","adm"],"#,
            r#""ssh_authorized_keys":["ssh-ed25519 AAAA alice@laptop"]}],"write_files":[{"path":"/etc/motd","permissions":"0644","#,
            r#""owner":493,"content":"Welcome.\n  indented\n\n# not a comment\n"},{"path":"/etc/x","content":"a\tb\n"}],"#,
            r#""runcmd":[["sh","-c","echo hi"],"echo \"quoted\" 'and' plain"],"package_update":true,"#,
            r#""swap":{"size":1.5e+3,"file":null},"bootcmd":["folded into one\nline"]}"#
        )
    );
}

#[test]
fn values_and_lookups() {
    let mut nodes = [Node::EMPTY; 64];
    let mut text = [0u8; 512];
    let mut arena = Arena::new(&mut nodes, &mut text);
    let root = arena.parse(b"a: 1\nb: [x, y]\na: 2\n2: two\ntrue: t\nn:\ns: 'yes'\n").unwrap();
    let doc = arena.value(root);
    assert_eq!(doc.kind(), Kind::Mapping);
    assert_eq!((doc.line(), doc.column()), (1, 1));
    assert_eq!(doc.get("a").unwrap().as_int(), Some(2));
    assert_eq!(doc.get("a").unwrap().line(), 3);
    assert!(doc.get("2").is_none() && doc.get("true").is_none() && doc.get("zz").is_none());
    assert!(doc.get("n").unwrap().is_null());
    assert_eq!(doc.get("s").unwrap().as_bool(), None);
    assert_eq!(doc.get("s").unwrap().as_str(), Some("yes"));
    let b = doc.get("b").unwrap();
    assert_eq!((b.kind(), b.len(), b.line(), b.column()), (Kind::Sequence, 2, 2, 4));
    let items: Vec<_> = b.items().map(|v| v.as_str().unwrap()).collect();
    assert_eq!(items, ["x", "y"]);
    assert_eq!(doc.len(), 6);
    let keys: Vec<_> = doc.entries().map(|(k, _)| k.as_str().unwrap()).collect();
    assert_eq!(keys, ["a", "b", "2", "true", "n", "s"]);
    assert_eq!(doc.entries().next().unwrap().1.as_int(), Some(2));
    assert!(b.get("x").is_none());
    assert_eq!(doc.items().count(), 0);
    assert_eq!(doc.as_str(), None);
    assert_eq!(format!("{:?}", b), r#"["x","y"]"#);
    // A second document goes after the first; both stay readable.
    let second = arena.parse(b"- z").unwrap();
    assert_eq!(arena.value(second).items().next().unwrap().as_str(), Some("z"));
    assert_eq!(arena.value(root).get("a").unwrap().as_int(), Some(2));
}

#[test]
fn scalars_resolve_as_pyyaml_safe_loader() {
    use Scalar::*;
    let cases: [(&str, Scalar<'_>); 48] = [
        ("~", Null),
        ("null", Null),
        ("NULL", Null),
        ("nULL", Str("nULL")),
        ("yes", Bool(true)),
        ("Off", Bool(false)),
        ("ON", Bool(true)),
        ("n", Str("n")),
        ("True", Bool(true)),
        ("tRUE", Str("tRUE")),
        ("0", Int(0)),
        ("-17", Int(-17)),
        ("+1_000", Int(1000)),
        ("0755", Int(493)),
        ("0_", Int(0)),
        ("09", Str("09")),
        ("0x1F", Int(31)),
        ("-0b101", Int(-5)),
        ("1:30", Int(90)),
        ("1:60", Str("1:60")),
        ("0:30", Str("0:30")),
        ("9223372036854775807", Int(i64::MAX)),
        ("-9223372036854775808", Int(i64::MIN)),
        ("1.5", Float("1.5")),
        (".5", Float(".5")),
        ("-.5", Str("-.5")),
        ("1.", Float("1.")),
        ("1e5", Str("1e5")),
        ("1.0e5", Str("1.0e5")),
        ("1.0e+5", Float("1.0e+5")),
        ("1:30.5", Float("1:30.5")),
        ("-.inf", Float("-.inf")),
        (".Inf", Float(".Inf")),
        ("+.INF", Float("+.INF")),
        (".iNF", Str(".iNF")),
        (".InF", Str(".InF")),
        ("inf", Str("inf")),
        (".", Str(".")),
        (".NaN", Float(".NaN")),
        ("+.nan", Str("+.nan")),
        ("1.2.3", Str("1.2.3")),
        ("2024-01-02", Str("2024-01-02")),
        ("0o17", Str("0o17")),
        ("a b", Str("a b")),
        ("'1'", Str("1")),
        ("\"true\"", Str("true")),
        ("''", Str("")),
        ("", Null),
    ];
    for (text, expected) in cases {
        let source = format!("k: {text}\n");
        let mut nodes = [Node::EMPTY; 8];
        let mut buf = [0u8; 64];
        let mut arena = Arena::new(&mut nodes, &mut buf);
        let root = arena.parse(source.as_bytes()).unwrap();
        assert_eq!(arena.value(root).get("k").unwrap().scalar(), Some(expected), "{text}");
    }
}

#[test]
fn json_as_python_writes_it() {
    let cases: [(&[u8], &str); 12] = [
        (b"1: a\n\"true\": b\n~: c\n1.5: d", r#"{"1":"a","true":"b","null":"c","1.5":"d"}"#),
        (b"[.5, -1., 1_0.2_5, 1.5e-3, 1:30.25, -.INF, .inf, .nan, 00.1]", "[0.5,-1.0,10.25,1.5e-3,90.25,-Infinity,Infinity,NaN,0.1]"),
        (b"a: 1\nA: 2\na: 3", r#"{"a":3,"A":2}"#),
        (b"1: a\ntrue: b", r#"{"1":"b"}"#),
        (b"\"\\0\\x1f\\\\\\\"\\u00e9\\U0001F600\\N\\L\"", "\"\\u0000\\u001f\\\\\\\"\u{e9}\u{1f600}\\u0085\\u2028\""),
        (b"", "null"),
        (b"# only a comment\n", "null"),
        (b"---\n...\n", "null"),
        (b"- \n-\n- # c", "[null,null,null]"),
        (b"{}", "{}"),
        (b"a: []", r#"{"a":[]}"#),
        (b"\xef\xbb\xbfa: b", r#"{"a":"b"}"#),
    ];
    for (source, expected) in cases {
        assert_eq!(json(source).unwrap(), expected, "{}", String::from_utf8_lossy(source));
    }
}

#[test]
fn block_structure() {
    let cases: [(&[u8], &str); 16] = [
        (b"- - a\n  - b\n- c", r#"[["a","b"],"c"]"#),
        (b"- a: 1\n  b: 2\n- c: 3", r#"[{"a":1,"b":2},{"c":3}]"#),
        (b"a:\n- 1\n- 2\nb: 3", r#"{"a":[1,2],"b":3}"#),
        (b"a:\n  - 1\n  -\n    b: 2", r#"{"a":[1,{"b":2}]}"#),
        (b"a:\n  b:\n    c: d\ne: f", r#"{"a":{"b":{"c":"d"}},"e":"f"}"#),
        (b"  a: 1\n  b: 2", r#"{"a":1,"b":2}"#),
        (b"a:\nb:\n", r#"{"a":null,"b":null}"#),
        (b"a: b\n  c\n\n  d\ne: f", r#"{"a":"b c\nd","e":"f"}"#),
        (b"- a\n -b", r#"["a -b"]"#),
        (b"plain text\nover lines # comment", r#""plain text over lines""#),
        (b"a: x:y z#w", r#"{"a":"x:y z#w"}"#),
        (b"'a''b': \"c\"  # d", r#"{"a'b":"c"}"#),
        (b"a : b", r#"{"a":"b"}"#),
        (b"--- # doc\na: 1\n... # end\n# more\n", r#"{"a":1}"#),
        (b"--- text", r#""text""#),
        (b"a: b\r\nc:\r\n  - d\r\n", r#"{"a":"b","c":["d"]}"#),
    ];
    for (source, expected) in cases {
        assert_eq!(json(source).unwrap(), expected, "{}", String::from_utf8_lossy(source));
    }
}

#[test]
fn flow_collections() {
    let cases: [(&[u8], &str); 9] = [
        (b"[a, b c, 'd', \"e\"]", r#"["a","b c","d","e"]"#),
        (b"{a: 1, b: [2, {c: 3}], d}", r#"{"a":1,"b":[2,{"c":3}],"d":null}"#),
        (b"[a: b, c]", r#"[{"a":"b"},"c"]"#),
        (b"{\"a\":b, 'c':d}", r#"{"a":"b","c":"d"}"#),
        (b"[a,\n  b, # comment\nc,\n]", r#"["a","b","c"]"#),
        (b"{a:b, c: }", r#"{"a:b":null,"c":null}"#),
        (b"[-, -a, a#b, http://x]", r#"["-","-a","a#b","http://x"]"#),
        (b"key: [a\n  b]", r#"{"key":["a b"]}"#),
        (b"[[[]]]", "[[[]]]"),
    ];
    for (source, expected) in cases {
        assert_eq!(json(source).unwrap(), expected, "{}", String::from_utf8_lossy(source));
    }
}

#[test]
fn quoted_and_block_scalars() {
    let cases: [(&[u8], &str); 17] = [
        (b"'a\n  b\n\n  c '", r#""a b\nc ""#),
        (b"\"a \\\n   b\\\n\n c\"", r#""a b\nc""#),
        (b"\"\\t\\a\\b\\e\\f\\r\\v\\/\\ \\_\"", "\"\\t\\u0007\\u0008\\u001b\\u000c\\r\\u000b/ \u{a0}\""),
        (b"\"tab\there\"", r#""tab\there""#),
        (b"a: |\n  x\n    y\n\n  z\n\n\nb: 1", r#"{"a":"x\n  y\n\nz\n","b":1}"#),
        (b"a: |-\n  x\n\n", r#"{"a":"x"}"#),
        (b"a: |+\n  x\n\n", r#"{"a":"x\n\n"}"#),
        (b"a: >\n  one\n  two\n\n  three\n    more\n  four\n", r#"{"a":"one two\nthree\n  more\nfour\n"}"#),
        (b"a: >-\n  x\n  y", r#"{"a":"x y"}"#),
        (b"a: |2\n   x\n  y\n", r#"{"a":" x\ny\n"}"#),
        (b"a: |1-\n  x", r#"{"a":" x"}"#),
        (b"- |\n  x\n- >+\n\n- |  # comment\n  \ty", r#"["x\n","\n","\ty"]"#),
        (b"a: |\nb: c", r#"{"a":"","b":"c"}"#),
        (b"--- |\n  root\n", r#""root\n""#),
        (b"a: |\n  x\r\n  y\r\n", r#"{"a":"x\ny\n"}"#),
        (b"- a: |\n    x\n  b: y", r#"[{"a":"x\n","b":"y"}]"#),
        (b"a:\n|\n x\nb: >\n c", r#"{"a":"x\n","b":"c"}"#),
    ];
    for (source, expected) in cases {
        assert_eq!(json(source).unwrap(), expected, "{}", String::from_utf8_lossy(source));
    }
}

#[test]
fn explicit_tags_as_pyyaml_constructs_them() {
    let cases: [(&[u8], &str); 22] = [
        (b"a: !!str 123", r#"{"a":"123"}"#),
        (b"a: !!int '12'", r#"{"a":12}"#),
        (b"a: !!int 0x1F", r#"{"a":31}"#),
        (b"a: !!float 1", r#"{"a":1.0}"#),
        (b"a: !!float '1.5'", r#"{"a":1.5}"#),
        (b"a: !!float 010", r#"{"a":10.0}"#),
        (b"a: !!bool 'YeS'", r#"{"a":true}"#),
        (b"a: !!bool oFF", r#"{"a":false}"#),
        (b"a: !!null foo", r#"{"a":null}"#),
        (b"a: !!str\nb: !!null", r#"{"a":"","b":null}"#),
        (b"!!str 1: a\n!!str 2: b", r#"{"1":"a","2":"b"}"#),
        (b"a: !!map\n  b: 1", r#"{"a":{"b":1}}"#),
        (b"a: !!seq\n- 1", r#"{"a":[1]}"#),
        (b"- !!seq\n  - 1", "[[1]]"),
        (b"!!map\na: !!str <<", r#"{"a":"<<"}"#),
        (b"a: !!str\n  123", r#"{"a":"123"}"#),
        (b"[!!str 1, !!int '2', !!str , !!seq [3]]", r#"["1",2,"",[3]]"#),
        (b"{!!str 1: !!str 2, a: !!str }", r#"{"1":"2","a":""}"#),
        (b"a: !!binary aGVsbG8=", r#"{"a":"ci-b64:aGVsbG8="}"#),
        (b"a: !!binary |\n  aGVs\n  bG8=\nb: 1", r#"{"a":"ci-b64:aGVsbG8=","b":1}"#),
        (b"a: !!binary ''", r#"{"a":"ci-b64:"}"#),
        (b"- !!binary\n  AAEC/w==", r#"["ci-b64:AAEC/w=="]"#),
    ];
    for (source, expected) in cases {
        assert_eq!(json(source).as_deref(), Ok(expected), "{}", String::from_utf8_lossy(source));
    }
    // The bytes, not text: `as_str` has none, `as_bytes` all of them.
    let mut nodes = [Node::EMPTY; 16];
    let mut text = [0u8; 64];
    let mut arena = Arena::new(&mut nodes, &mut text);
    let root = arena.parse(b"a: !!binary AAEC/w==\nb: c").unwrap();
    let value = arena.value(root).get("a").unwrap();
    assert_eq!((value.as_str(), value.as_bytes(), value.scalar()), (None, Some(&[0, 1, 2, 255][..]), Some(Scalar::Binary(&[0, 1, 2, 255]))));
    assert_eq!(arena.value(root).get("b").and_then(|b| b.as_str()), Some("c"));
}

#[test]
fn errors_name_the_construct_and_where() {
    use ErrorKind::*;
    let cases: [(&[u8], ErrorKind, u32, u32); 51] = [
        (b"a: b\n\xff", InvalidUtf8, 2, 1),
        (b"a: \x01", ControlCharacter, 1, 4),
        (b"a: \xc3\xa9\x7f", ControlCharacter, 1, 5),
        (b"a: b\xc2\x85c", LineSeparator, 1, 5),
        (b"a:\n\tb: c", Tab, 2, 1),
        (b"a: b\t", Tab, 1, 5),
        (b"%YAML 1.1\n---\na", Directive, 1, 1),
        (b"a: 1\n---\nb: 2", SecondDocument, 2, 1),
        (b"a\n...\nb", SecondDocument, 3, 1),
        (b"# c\n...", UnexpectedCharacter, 2, 1),
        (b"a: &x 1", Anchor, 1, 4),
        (b"- *x", Alias, 1, 3),
        (b"a: !mytag 1", Tag, 1, 4),
        (b"[!x a]", Tag, 1, 2),
        (b"a: !!timestamp 2001-01-01", Tag, 1, 4),
        (b"a: !<tag:yaml.org,2002:str> b", Tag, 1, 4),
        (b"a: ! 1", Tag, 1, 4),
        (b"a:
  !!int abc", TagMismatch, 2, 3),
        (b"a: !!str [1]", TagMismatch, 1, 4),
        (b"a: !!map 1", TagMismatch, 1, 4),
        (b"a: !!int", TagMismatch, 1, 4),
        (b"- !!bool 1", TagMismatch, 1, 3),
        (b"a: !!binary aGVsbG8", BadBinary, 1, 4),
        (b"a: !!seq - b", SequenceEntryNotAllowed, 1, 10),
        (b"? a\n: b", ComplexKey, 1, 1),
        (b"{? a}", ComplexKey, 1, 2),
        (b"b: 1\n<<: {a: 1}", MergeKey, 2, 1),
        (b"a: =", ValueKey, 1, 4),
        (b"[a]: b", CollectionKey, 1, 1),
        (b"{[a]: b}", CollectionKey, 1, 2),
        (b"a: 1\nb\n c: 2", MultiLineKey, 2, 1),
        (b"a:\n  b: 1\n c: 2", BadIndentation, 3, 2),
        (b"a: 1\n  b: 2", MappingValueNotAllowed, 2, 4),
        (b"a: 1\nb\n", ExpectedKey, 2, 1),
        (b"- a\nb: c", ExpectedEntry, 2, 1),
        (b"a: b: c", MappingValueNotAllowed, 1, 5),
        (b"a: - b", SequenceEntryNotAllowed, 1, 4),
        (b"a: 'b' c", UnexpectedText, 1, 8),
        (b"a: @b", UnexpectedCharacter, 1, 4),
        (b"a: 'b\n\n", UnterminatedQuote, 1, 4),
        (b"a: \"b\n---\nc\"", UnterminatedQuote, 1, 4),
        (b"a: [b,\n  c", UnterminatedFlow, 1, 4),
        (b"{a: 1 b: 2}", FlowSyntax, 1, 8),
        (b"[a, b}", FlowSyntax, 1, 6),
        (b"\"\\q\"", BadEscape, 1, 2),
        (b"\"\\x4\"", BadEscape, 1, 2),
        (b"\"\\ud800\"", BadEscape, 1, 2),
        (b"a: |0\n x", BadBlockHeader, 1, 5),
        (b"a: | x", BadBlockHeader, 1, 6),
        (b"a: 9223372036854775808", BadInteger, 1, 4),
        (b"a: 0x_", BadInteger, 1, 4),
    ];
    for (source, kind, line, column) in cases {
        assert_eq!(error(source), (kind, line, column), "{}", String::from_utf8_lossy(source));
    }
    let e = json(b"a:\n  - x\n  - &y z").unwrap_err();
    assert_eq!(e.to_string(), "line 3 column 5: anchors (&) are not supported");
}

#[test]
fn each_kind_says_its_own_reason() {
    use ErrorKind::*;
    let kinds = [
        InvalidUtf8, ControlCharacter, LineSeparator, Tab, Directive, SecondDocument, Anchor, Alias, Tag, TagMismatch,
        BadBinary, ComplexKey, MergeKey, ValueKey, CollectionKey, MultiLineKey, BadIndentation, ExpectedKey,
        ExpectedEntry, MappingValueNotAllowed, SequenceEntryNotAllowed, UnexpectedText, UnexpectedCharacter,
        UnterminatedQuote, UnterminatedFlow, FlowSyntax, BadEscape, BadBlockHeader, BadInteger, TooManyNodes, TextFull,
        TooDeep,
    ];
    let said = |kind, limit| Error { kind, line: 2, column: 7, limit }.to_string();
    let reasons: Vec<String> = kinds.iter().map(|&kind| said(kind, 64)).collect();
    assert_eq!(kinds.len(), super::REASONS.lines().count() + 3, "a reason for every kind without a limit");
    for (index, reason) in reasons.iter().enumerate() {
        let reason = reason.strip_prefix("line 2 column 7: ").unwrap();
        assert!(!reason.is_empty() && !reasons[..index].iter().any(|r| r.ends_with(reason)), "{:?}: {reason:?}", kinds[index]);
    }
    assert_eq!(said(InvalidUtf8, 0), "line 2 column 7: invalid UTF-8");
    assert_eq!(said(Tab, 0), "line 2 column 7: tab outside quotes, block scalars and comments (YAML indents and separates with spaces)");
    assert_eq!(said(BadInteger, 0), "line 2 column 7: integer beyond 64 bits, or without digits");
    assert_eq!(said(TooManyNodes, 4), "line 2 column 7: more than 4 nodes");
    assert_eq!(said(TextFull, 8), "line 2 column 7: more than 8 bytes of scalar text");
    assert_eq!(said(TooDeep, 64), "line 2 column 7: collections nested deeper than 64 levels");
}

#[test]
fn limits() {
    let mut nodes = [Node::EMPTY; 4];
    let mut text = [0u8; 8];
    let mut arena = Arena::new(&mut nodes, &mut text);
    let exceeded = |e: Error| (e.kind, e.limit);
    assert_eq!(exceeded(arena.parse(b"[a, b, c, d]").unwrap_err()), (ErrorKind::TooManyNodes, 4));
    assert_eq!(exceeded(arena.parse(b"\"123456789\"").unwrap_err()), (ErrorKind::TextFull, 8));
    // A failed parse leaves the arena as it was.
    let root = arena.parse(b"[ab, cd, ef]").unwrap();
    assert_eq!(arena.value(root).len(), 3);
    assert_eq!(exceeded(arena.parse(b"x").unwrap_err()), (ErrorKind::TooManyNodes, 4));
    assert_eq!(arena.value(root).items().nth(2).unwrap().as_str(), Some("ef"));
    let deep = "[".repeat(DEPTH_LIMIT + 1) + &"]".repeat(DEPTH_LIMIT + 1);
    assert_eq!(exceeded(json(deep.as_bytes()).unwrap_err()), (ErrorKind::TooDeep, DEPTH_LIMIT as u32));
    let ok = "[".repeat(DEPTH_LIMIT) + &"]".repeat(DEPTH_LIMIT);
    assert!(json(ok.as_bytes()).is_ok());
    let mut block = String::new();
    for level in 0..=DEPTH_LIMIT {
        block += &" ".repeat(level);
        block += "- \n";
    }
    block += &" ".repeat(DEPTH_LIMIT + 1);
    block += "x\n";
    let mut nodes = [Node::EMPTY; 256];
    let mut text = [0u8; 16];
    assert_eq!(exceeded(Arena::new(&mut nodes, &mut text).parse(block.as_bytes()).unwrap_err()), (ErrorKind::TooDeep, DEPTH_LIMIT as u32));
}

#[test]
fn garbage_never_panics() {
    let pieces: [&[u8]; 24] = [
        b"a", b": ", b"- ", b"\n", b"  ", b"'", b"\"", b"\\", b"[", b"]", b"{", b"}", b",", b"#", b"|", b">-", b"\t", b"?", b"&",
        b"1", b"\r", b"---", b"\xc3", b"x: |2\n",
    ];
    let mut garbage = crate::fuzz::Garbage::new(29);
    let mut nodes = [Node::EMPTY; 64];
    let mut text = [0u8; 256];
    for _ in 0..20000 {
        let source = garbage.text(&pieces, 24);
        let mut arena = Arena::new(&mut nodes, &mut text);
        if let Ok(root) = arena.parse(&source) {
            let mut out = String::new();
            write_json(arena.value(root), &mut out).unwrap();
            assert!(crate::json::JsonText::parse(out.as_bytes()).is_ok() || out.contains("NaN") || out.contains("Infinity"), "{out}");
            let _ = arena.value(root).get("a").map(|v| v.len());
        }
    }
    crate::fuzz::seed("yaml_json", CLOUD_CONFIG);
    crate::fuzz::seed("cloud_config", CLOUD_CONFIG);
    for _ in 0..3000 {
        let source = garbage.mutated(CLOUD_CONFIG, 0..CLOUD_CONFIG.len(), 3);
        let mut nodes = [Node::EMPTY; 256];
        let mut text = [0u8; 4096];
        let mut arena = Arena::new(&mut nodes, &mut text);
        if let Ok(root) = arena.parse(&source) {
            write_json(arena.value(root), &mut String::new()).unwrap();
        }
    }
}

#[test]
fn null_and_bool_words_in_pyyamls_three_spellings_only() {
    let mut nodes = [Node::EMPTY; 4];
    let mut text = [0u8; 16];
    for (word, resolved) in [
        ("Null", Some(Scalar::Null)),
        ("YES", Some(Scalar::Bool(true))),
        ("No", Some(Scalar::Bool(false))),
        ("FALSE", Some(Scalar::Bool(false))),
        ("oN", None),
        ("yES", None),
        ("NuLL", None),
        ("nul", None),
        ("offf", None),
    ] {
        let mut arena = Arena::new(&mut nodes, &mut text);
        let root = arena.parse(word.as_bytes()).unwrap();
        assert_eq!(arena.value(root).scalar(), Some(resolved.unwrap_or(Scalar::Str(word))), "{word}");
    }
}


