package cpython

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillbox-dev/skillbox/hostfuncs"
)

// lxml is compiled in (lxml.etree, lxml.objectify over libxml2 and libxslt): what the published
// document skills do with it works, in other encodings too, and it reaches no file or host the
// run was not given.
func TestLXML(t *testing.T) {
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret.txt")
	if err := os.WriteFile(secret, []byte("host-secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := skillDir(t, map[string]string{"p.py": `import sys
from lxml import etree, html, objectify
from lxml.builder import E
print("module", etree.__spec__.origin, ".".join(map(str, etree.LXML_VERSION[:3])), etree.LIBXML_VERSION, etree.LIBXSLT_VERSION)
doc = etree.fromstring(b"<root><item n='1'>a</item><item n='2'>b</item></root>")
print("xpath", doc.xpath("//item[@n>1]/text()"), doc.xpath("count(//item)"))
W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
d = etree.fromstring(('<w:document xmlns:w="%s"><w:body><w:p><w:r><w:t>Hi</w:t></w:r></w:p></w:body></w:document>' % W).encode())
etree.SubElement(d.find("{%s}body" % W), "{%s}p" % W).text = "Wörld ✓"
print("ns", d.xpath("//w:t/text()", namespaces={"w": W}), etree.tostring(d, encoding="unicode").count("Wörld ✓"))
xslt = etree.XSLT(etree.XML(b'''<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform"
   xmlns:str="http://exslt.org/strings" extension-element-prefixes="str">
  <xsl:param name="t"/>
  <xsl:template match="/root"><ul title="{$t}"><xsl:for-each select="item"><li><xsl:value-of select="str:padding(2, '*')"/><xsl:value-of select="."/></li></xsl:for-each></ul></xsl:template>
</xsl:stylesheet>'''))
print("xslt", str(xslt(doc, t=etree.XSLT.strparam("T"))).strip())
print("html", html.fromstring("<p>Hi <b>there</b><br>open").text_content())
print("objectify", objectify.fromstring("<r><n>3</n></r>").n + 1, etree.tostring(E.doc(E.p("x", id="1"))))
print("latin1", etree.fromstring('<?xml version="1.0" encoding="ISO-8859-1"?><a>\xe9</a>'.encode("latin-1")).text,
      "cp1252", etree.fromstring('<?xml version="1.0" encoding="windows-1252"?><a>\u20ac</a>'.encode("cp1252")).text,
      etree.tostring(etree.fromstring("<a>\u20ac</a>"), encoding="cp1252"))
try:
    etree.fromstring(b"<a><b></a>")
except etree.XMLSyntaxError as e:
    print("error", e)
try:
    leak = etree.fromstring(('<!DOCTYPE a [<!ENTITY e SYSTEM "file://%s">]><a>&e;</a>' % sys.argv[1]).encode())
    print("entity", repr(leak.text))
except etree.XMLSyntaxError as e:
    print("entity", str(e).split(",")[0])
try:
    etree.parse("http://127.0.0.1:1/x.xml")
except OSError as e:
    print("network", type(e).__name__)
try:
    import lxml.isoschematron
except ImportError as e:
    print("isoschematron", type(e).__name__)
`})
	res, err := Run(context.Background(), compiledFor(t, 1024), Program{Dir: dir, Script: "p.py", Argv: []string{secret}}, newHost(t, &hostfuncs.Grant{}))
	if err != nil {
		t.Fatal(err)
	}
	// Packages, which pydeps meets requirements of lxml with, is the version built in.
	want := `module built-in ` + Packages["lxml"] + ` (2, 9, 14) (1, 1, 35)
xpath ['b'] 2.0
ns ['Hi'] 1
xslt <?xml version="1.0"?>
<ul title="T"><li>**a</li><li>**b</li></ul>
html Hi thereopen
objectify 4 b'<doc><p id="1">x</p></doc>'
latin1 é cp1252 € b"<?xml version='1.0' encoding='cp1252'?>\n<a>\x80</a>"
error Opening and ending tag mismatch: b line 1 and a, line 1, column 11 (<string>, line 1)
entity Entity 'e' not defined
network OSError
isoschematron ModuleNotFoundError
`
	if got := string(res.Stdout); got != want || res.ExitCode != 0 || strings.Contains(got+string(res.Stderr), "host-secret") {
		t.Fatalf("exit %d\nstdout:\n%s\nwant:\n%s\nstderr:\n%s", res.ExitCode, got, want, res.Stderr)
	}
}
