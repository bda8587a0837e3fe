"""Tests for mcpfast.server.uri_template: RFC 6570 expansion and matching."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpfast.server.uri_template import UriTemplate, is_template

# The variables and expected expansions of RFC 6570 section 3.2.
RFC_VALUES = {
    "count": ("one", "two", "three"),
    "dom": ("example", "com"),
    "dub": "me/too",
    "hello": "Hello World!",
    "half": "50%",
    "var": "value",
    "who": "fred",
    "base": "http://example.com/home/",
    "path": "/foo/bar",
    "list": ("red", "green", "blue"),
    "keys": {"semi": ";", "dot": ".", "comma": ","},
    "v": "6",
    "x": "1024",
    "y": "768",
    "empty": "",
    "empty_keys": {},
    "undef": None,
}

RFC_EXAMPLES = [
    # 3.2.1 variable expansion
    ("{count}", "one,two,three"),
    ("{count*}", "one,two,three"),
    ("{/count}", "/one,two,three"),
    ("{/count*}", "/one/two/three"),
    ("{;count}", ";count=one,two,three"),
    ("{;count*}", ";count=one;count=two;count=three"),
    ("{?count}", "?count=one,two,three"),
    ("{?count*}", "?count=one&count=two&count=three"),
    ("{&count*}", "&count=one&count=two&count=three"),
    # 3.2.2 simple string expansion
    ("{var}", "value"),
    ("{hello}", "Hello%20World%21"),
    ("{half}", "50%25"),
    ("O{empty}X", "OX"),
    ("O{undef}X", "OX"),
    ("{x,y}", "1024,768"),
    ("{x,hello,y}", "1024,Hello%20World%21,768"),
    ("?{x,empty}", "?1024,"),
    ("?{x,undef}", "?1024"),
    ("?{undef,y}", "?768"),
    ("{var:3}", "val"),
    ("{var:30}", "value"),
    ("{list}", "red,green,blue"),
    ("{list*}", "red,green,blue"),
    ("{keys}", "semi,%3B,dot,.,comma,%2C"),
    ("{keys*}", "semi=%3B,dot=.,comma=%2C"),
    # 3.2.3 reserved expansion
    ("{+var}", "value"),
    ("{+hello}", "Hello%20World!"),
    ("{+half}", "50%25"),
    ("{base}index", "http%3A%2F%2Fexample.com%2Fhome%2Findex"),
    ("{+base}index", "http://example.com/home/index"),
    ("O{+empty}X", "OX"),
    ("O{+undef}X", "OX"),
    ("{+path}/here", "/foo/bar/here"),
    ("here?ref={+path}", "here?ref=/foo/bar"),
    ("up{+path}{var}/here", "up/foo/barvalue/here"),
    ("{+x,hello,y}", "1024,Hello%20World!,768"),
    ("{+path,x}/here", "/foo/bar,1024/here"),
    ("{+path:6}/here", "/foo/b/here"),
    ("{+list}", "red,green,blue"),
    ("{+list*}", "red,green,blue"),
    ("{+keys}", "semi,;,dot,.,comma,,"),
    ("{+keys*}", "semi=;,dot=.,comma=,"),
    # 3.2.4 fragment expansion
    ("{#var}", "#value"),
    ("{#hello}", "#Hello%20World!"),
    ("{#half}", "#50%25"),
    ("foo{#empty}", "foo#"),
    ("foo{#undef}", "foo"),
    ("{#x,hello,y}", "#1024,Hello%20World!,768"),
    ("{#path,x}/here", "#/foo/bar,1024/here"),
    ("{#path:6}/here", "#/foo/b/here"),
    ("{#list}", "#red,green,blue"),
    ("{#list*}", "#red,green,blue"),
    ("{#keys}", "#semi,;,dot,.,comma,,"),
    ("{#keys*}", "#semi=;,dot=.,comma=,"),
    # 3.2.5 label expansion
    ("{.who}", ".fred"),
    ("{.who,who}", ".fred.fred"),
    ("{.half,who}", ".50%25.fred"),
    ("www{.dom*}", "www.example.com"),
    ("X{.var}", "X.value"),
    ("X{.empty}", "X."),
    ("X{.undef}", "X"),
    ("X{.var:3}", "X.val"),
    ("X{.list}", "X.red,green,blue"),
    ("X{.list*}", "X.red.green.blue"),
    ("X{.keys}", "X.semi,%3B,dot,.,comma,%2C"),
    ("X{.keys*}", "X.semi=%3B.dot=..comma=%2C"),
    ("X{.empty_keys}", "X"),
    ("X{.empty_keys*}", "X"),
    # 3.2.6 path segment expansion
    ("{/who}", "/fred"),
    ("{/who,who}", "/fred/fred"),
    ("{/half,who}", "/50%25/fred"),
    ("{/who,dub}", "/fred/me%2Ftoo"),
    ("{/var}", "/value"),
    ("{/var,empty}", "/value/"),
    ("{/var,undef}", "/value"),
    ("{/var,x}/here", "/value/1024/here"),
    ("{/var:1,var}", "/v/value"),
    ("{/list}", "/red,green,blue"),
    ("{/list*}", "/red/green/blue"),
    ("{/list*,path:4}", "/red/green/blue/%2Ffoo"),
    ("{/keys}", "/semi,%3B,dot,.,comma,%2C"),
    ("{/keys*}", "/semi=%3B/dot=./comma=%2C"),
    # 3.2.7 path-style parameter expansion
    ("{;who}", ";who=fred"),
    ("{;half}", ";half=50%25"),
    ("{;empty}", ";empty"),
    ("{;v,empty,who}", ";v=6;empty;who=fred"),
    ("{;v,bar,who}", ";v=6;who=fred"),
    ("{;x,y}", ";x=1024;y=768"),
    ("{;x,y,empty}", ";x=1024;y=768;empty"),
    ("{;x,y,undef}", ";x=1024;y=768"),
    ("{;hello:5}", ";hello=Hello"),
    ("{;list}", ";list=red,green,blue"),
    ("{;list*}", ";list=red;list=green;list=blue"),
    ("{;keys}", ";keys=semi,%3B,dot,.,comma,%2C"),
    ("{;keys*}", ";semi=%3B;dot=.;comma=%2C"),
    # 3.2.8 form-style query expansion
    ("{?who}", "?who=fred"),
    ("{?half}", "?half=50%25"),
    ("{?x,y}", "?x=1024&y=768"),
    ("{?x,y,empty}", "?x=1024&y=768&empty="),
    ("{?x,y,undef}", "?x=1024&y=768"),
    ("{?var:3}", "?var=val"),
    ("{?list}", "?list=red,green,blue"),
    ("{?list*}", "?list=red&list=green&list=blue"),
    ("{?keys}", "?keys=semi,%3B,dot,.,comma,%2C"),
    ("{?keys*}", "?semi=%3B&dot=.&comma=%2C"),
    # 3.2.9 form-style query continuation
    ("{&who}", "&who=fred"),
    ("{&half}", "&half=50%25"),
    ("?fixed=yes{&x}", "?fixed=yes&x=1024"),
    ("{&x,y,empty}", "&x=1024&y=768&empty="),
    ("{&var:3}", "&var=val"),
    ("{&list}", "&list=red,green,blue"),
    ("{&list*}", "&list=red&list=green&list=blue"),
    ("{&keys}", "&keys=semi,%3B,dot,.,comma,%2C"),
    ("{&keys*}", "&semi=%3B&dot=.&comma=%2C"),
]


@pytest.mark.parametrize("template, expected", RFC_EXAMPLES)
def test_rfc6570_expansion_examples(template, expected):
    assert UriTemplate(template).expand(RFC_VALUES) == expected


def test_expand_keyword_arguments_and_value_types():
    template = UriTemplate("api://{kind}/{id}{?verbose,limit,ratio}")
    assert template.expand(kind="user", id=42, verbose=True, limit=0, ratio=0.5) == (
        "api://user/42?verbose=true&limit=0&ratio=0.5"
    )
    assert template.expand({"kind": "a"}, id="b") == "api://a/b"
    assert template.expand() == "api:///"
    assert UriTemplate("{x}").expand(x=False) == "false"
    assert UriTemplate("{x*}").expand(x=[None, "a", None]) == "a"
    assert UriTemplate("{x}").expand(x=[]) == ""
    assert UriTemplate("{x}").expand(x="é/ü") == "%C3%A9%2F%C3%BC"
    assert UriTemplate("{+x}").expand(x="a b/c?d#e%20f%zz") == "a%20b/c?d#e%20f%25zz"
    # Variable names that are not identifiers need the mapping.
    assert UriTemplate("{a.b}{%41}").expand({"a.b": "1", "%41": "2"}) == "12"


def test_expand_errors():
    with pytest.raises(ValueError, match="prefix"):
        UriTemplate("{x:2}").expand(x=["a", "b"])
    with pytest.raises(TypeError, match="object"):
        UriTemplate("{x}").expand(x=object())
    with pytest.raises(TypeError, match="bytes"):
        UriTemplate("{x}").expand(x=b"raw")


# ---------------------------------------------------------------------------------------------
# parsing


def test_variables_in_order_without_duplicates():
    template = UriTemplate("x://{a}/{+b}{/c*}{?d,a}{&e:3}{#f}")
    assert template.variables == ("a", "b", "c", "d", "e", "f")
    assert UriTemplate("plain://uri").variables == ()
    assert UriTemplate("plain://uri").is_static
    assert not template.is_static


@pytest.mark.parametrize(
    "template",
    [
        "{",
        "}",
        "{a",
        "a}",
        "{a}}",
        "{}",
        "{{a}}",
        "{a{b}}",
        "{=a}",
        "{,a}",
        "{!a}",
        "{@a}",
        "{|a}",
        "{a,}",
        "{,}",
        "{a b}",
        "{a-b}",
        "{a:0}",
        "{a:10000}",
        "{a:x}",
        "{a*:3}",
        "{a:3*}",
        "{a**}",
        "{a.}",
        "{.a.}",
        "{a..b}",
        "{%4}",
        "{%zz}",
        "{+}",
        "a b{c}",
        "tab\t{c}",
        "nl\n{c}",
    ],
)
def test_invalid_templates(template):
    with pytest.raises(ValueError):
        UriTemplate(template)
    assert not is_template(template)


@pytest.mark.parametrize(
    "template",
    ["{a}", "x://{a.b}", "{%41b}", "{a_1:9999}", "{+path*}", "file:///{+path}", "{?a,b*}", "{_}"],
)
def test_valid_templates(template):
    assert is_template(template)
    assert UriTemplate(template).template == template


def test_is_template():
    assert not is_template("file:///etc/hosts")
    assert not is_template("")
    assert not is_template(None)  # type: ignore[arg-type]
    assert is_template("file:///{path}")
    with pytest.raises(TypeError):
        UriTemplate(3)  # type: ignore[arg-type]


def test_value_semantics():
    a = UriTemplate("x://{a}")
    assert a == UriTemplate("x://{a}")
    assert a != UriTemplate("x://{b}")
    assert a != "x://{a}"
    assert len({a, UriTemplate("x://{a}")}) == 1
    assert str(a) == "x://{a}"
    assert repr(a) == "UriTemplate('x://{a}')"
    with pytest.raises(AttributeError):
        a.template = "other"  # type: ignore[misc]


# ---------------------------------------------------------------------------------------------
# matching


@pytest.mark.parametrize(
    "template, uri, expected",
    [
        # level 1: one segment, percent-decoded
        ("users://{id}/profile", "users://42/profile", {"id": "42"}),
        ("users://{id}/profile", "users://a%20b%2Fc/profile", {"id": "a b/c"}),
        ("users://{id}/profile", "users://%C3%A9/profile", {"id": "é"}),
        ("users://{id}/profile", "users:///profile", None),
        ("users://{id}/profile", "users://a/b/profile", None),
        ("users://{id}", "users://a/b", None),
        ("users://{id}", "users://a?b", None),
        ("users://{id}", "users://a#b", None),
        ("users://{id}", "other://a", None),
        ("{name}.txt", "a.b.txt", {"name": "a.b"}),
        ("{x,y}", "1024,768", {"x": "1024", "y": "768"}),
        ("{x,y}", "1024", None),
        ("{list*}", "red,green", {"list": ["red", "green"]}),
        ("{var:3}", "val", {"var": "val"}),
        ("{var:3}", "v%20l", {"var": "v l"}),
        ("{var:3}", "valu", None),
        ("{var:1}", "%C3%A9", {"var": "é"}),
        ("{var:1}", "%C3%A9%C3%A9", None),
        ("x{/var:2}", "x/ab", {"var": "ab"}),
        ("x{/var:2}", "x/abc", None),
        ("m{;hello:5}", "m;hello=Hello", {"hello": "Hello"}),
        ("m{;hello:5}", "m;hello=HelloW", None),
        ("s{?var:3}", "s?var=val", {"var": "val"}),
        ("s{?var:3}", "s?var=valu", None),
        ("plain://uri", "plain://uri", {}),
        ("plain://uri", "plain://uri/", None),
        # reserved: spans segments
        ("file:///{+path}", "file:///a/b/c.txt", {"path": "a/b/c.txt"}),
        ("file:///{+path}", "file:///a%20b/c", {"path": "a b/c"}),
        ("file:///{+path}", "file:///a?b#c", {"path": "a?b#c"}),
        ("file:///{+path}", "file:///", None),
        ("repo://{owner}/{+path}/raw", "repo://me/src/x.py/raw", {"owner": "me", "path": "src/x.py"}),
        ("{+base}{?q}", "http://h/p?q=1", {"base": "http://h/p", "q": "1"}),
        ("{+base}{#frag}", "http://h/p#top", {"base": "http://h/p", "frag": "top"}),
        # fragment
        ("doc{#frag}", "doc#a/b", {"frag": "a/b"}),
        ("doc{#frag}", "doc", {}),
        # label and path segments
        ("file{.ext}", "file.txt", {"ext": "txt"}),
        ("file{.ext}", "file", {}),
        ("www{.dom*}", "www.example.com", {"dom": ["example", "com"]}),
        ("x{/path*}", "x/a/b/c", {"path": ["a", "b", "c"]}),
        ("x{/path*}", "x/a%2Fb", {"path": ["a/b"]}),
        ("x{/path*}", "x", {}),
        ("x{/path*}", "x//a", None),
        ("x{/a,b}", "x/1/2", {"a": "1", "b": "2"}),
        ("x{/a,b}/end", "x/end", {}),
        # path-style parameters
        ("m{;x,y}", "m;x=1;y=2", {"x": "1", "y": "2"}),
        ("m{;x,y}", "m;y=2", {"y": "2"}),
        ("m{;x,y}", "m;x;y=", {"x": "", "y": ""}),
        ("m{;x,y}", "m;y=2;x=1", None),
        ("m{;x}", "m;xy=1", None),
        ("m{;list*}", "m;list=a;list=b", {"list": ["a", "b"]}),
        # query: any order, each optional, strict about unknown and repeated names
        ("search://{q}{?limit,lang}", "search://x%20y?lang=en&limit=5", {"q": "x y", "lang": "en", "limit": "5"}),
        ("search://{q}{?limit,lang}", "search://x", {"q": "x"}),
        ("search://{q}{?limit,lang}", "search://x?", {"q": "x"}),
        ("search://{q}{?limit,lang}", "search://x?limit=", {"q": "x", "limit": ""}),
        ("search://{q}{?limit,lang}", "search://x?limit", {"q": "x", "limit": ""}),
        ("search://{q}{?limit,lang}", "search://x?limit=1&&lang=de", {"q": "x", "limit": "1", "lang": "de"}),
        ("search://{q}{?limit,lang}", "search://x?foo=1", None),
        ("search://{q}{?limit}", "search://x?limit=1&limit=2", None),
        ("search://{q}{?limit}", "search://x?limit=a%26b%3Dc", {"q": "x", "limit": "a&b=c"}),
        ("map{?tag*}", "map?tag=a&tag=b&tag=", {"tag": ["a", "b", ""]}),
        ("map{?tag*,n}", "map?n=1&tag=a", {"tag": ["a"], "n": "1"}),
        ("s?fixed=yes{&x}", "s?fixed=yes&x=1", {"x": "1"}),
        ("s?fixed=yes{&x}", "s?fixed=no&x=1", None),
        ("s{?a}{&b}", "s?a=1&b=2", {"a": "1", "b": "2"}),
        ("s{?a}{&b}", "s?b=2", {"b": "2"}),
        # a variable used twice must agree
        ("{a}/{a}", "1/1", {"a": "1"}),
        ("{a}/{a}", "1/2", None),
        ("x://{a}{?a}", "x://1?a=1", {"a": "1"}),
        ("x://{a}{?a}", "x://1?a=2", None),
        # bad percent-encoding
        ("{x}", "%FF", None),
        ("{x}", "%C3", None),
        ("{x}", "100%", {"x": "100%"}),
    ],
)
def test_match(template, uri, expected):
    assert UriTemplate(template).match(uri) == expected


def test_match_non_string():
    assert UriTemplate("{x}").match(None) is None  # type: ignore[arg-type]
    assert UriTemplate("{x}").match(b"x") is None  # type: ignore[arg-type]


def test_match_of_long_inputs_is_not_catastrophic():
    # Each pattern is linear in the input; a 100k-character URI must still be decided.
    template = UriTemplate("x://{a}/{+b}{/c*}{?q}")
    uri = "x://" + "a" * 50_000 + "/" + "b/" * 25_000
    assert template.match(uri) == {"a": "a" * 50_000, "b": "b/" * 25_000}
    assert UriTemplate("x{/p*}").match("x" + "/a" * 50_000 + "//") is None


# ---------------------------------------------------------------------------------------------
# property: expand then match gives the values back

any_text = st.text(min_size=1, max_size=8)
# Reserved expansion keeps "%XX" triplets as they are, so such values cannot round-trip.
reserved_text = st.text(min_size=1, max_size=8).filter(lambda s: "%" not in s)
reserved_text_before_query = reserved_text.filter(lambda s: "?" not in s and "#" not in s)
# A label value containing "." is indistinguishable from two labels.
label_text = any_text.filter(lambda s: "." not in s)

ROUND_TRIP_CASES = {
    "file:///{+path}": {"path": reserved_text},
    "users://{id}/profile": {"id": any_text},
    "search://{q}{?limit,lang}": {"q": any_text, "limit": st.none() | st.text(max_size=5),
                                  "lang": st.none() | st.text(max_size=5)},
    "repo://{owner}/{name}/blob/{+path}": {"owner": any_text, "name": any_text, "path": reserved_text},
    "code://{+path}{?line}": {"path": reserved_text_before_query, "line": st.none() | any_text},
    "x://items{/ids*}": {"ids": st.lists(any_text, max_size=4)},
    "x://h/{x,y}": {"x": any_text, "y": any_text},
    "x://f{.ext}": {"ext": st.none() | label_text},
    "x://p{;a,b}": {"a": st.none() | st.text(max_size=5), "b": st.none() | st.text(max_size=5)},
    "x://q{?tags*}": {"tags": st.lists(st.text(max_size=4), max_size=4)},
    "x://doc{#frag}": {"frag": st.none() | reserved_text},
    "x://list/{items*}": {"items": st.lists(any_text, min_size=1, max_size=4)},
}


@st.composite
def template_and_values(draw):
    template = draw(st.sampled_from(sorted(ROUND_TRIP_CASES)))
    values = {name: draw(strategy) for name, strategy in ROUND_TRIP_CASES[template].items()}
    return template, values


@settings(max_examples=1000, deadline=None)
@given(template_and_values())
def test_expand_then_match_round_trips(case):
    template_text, values = case
    template = UriTemplate(template_text)
    uri = template.expand(values)
    defined = {k: v for k, v in values.items() if v is not None and v != []}
    assert template.match(uri) == defined, uri


@settings(max_examples=300, deadline=None)
@given(st.text(min_size=1, max_size=12), st.integers(min_value=1, max_value=5))
def test_prefix_round_trip(value, length):
    template = UriTemplate(f"x://{{v:{length}}}/end")
    assert template.match(template.expand(v=value)) == {"v": value[:length]}


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=30))
def test_match_never_raises(uri):
    for template in ROUND_TRIP_CASES:
        result = UriTemplate(template).match(uri)
        assert result is None or isinstance(result, dict)
