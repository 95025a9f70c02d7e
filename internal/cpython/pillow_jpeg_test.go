package cpython

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"image"
	"image/color"
	"image/jpeg"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tetratelabs/wazero"

	"github.com/skillbox-dev/skillbox/hostfuncs"
	"github.com/skillbox-dev/skillbox/internal/scripterr"
)

// jpegGradient is the 64×48 image TestPillowJPEG encodes on both sides: smooth, so that JPEG's
// loss stays small and the decoders' differences (upsampling) smaller still.
func jpegGradient() *image.RGBA {
	m := image.NewRGBA(image.Rect(0, 0, 64, 48))
	for y := 0; y < 48; y++ {
		for x := 0; x < 64; x++ {
			m.Set(x, y, color.RGBA{uint8(x * 4), uint8(y * 5), 128, 255})
		}
	}
	return m
}

// near reports whether two colours are within tol of each other on every channel.
func near(a, b color.Color, tol int) bool {
	ar, ag, ab, _ := a.RGBA()
	br, bg, bb, _ := b.RGBA()
	for _, d := range []int{int(ar>>8) - int(br>>8), int(ag>>8) - int(bg>>8), int(ab>>8) - int(bb>>8)} {
		if d > tol || d < -tol {
			return false
		}
	}
	return true
}

// Pillow's JPEG codec is compiled in over libjpeg-turbo: it decodes what Go's image/jpeg wrote,
// encodes what Go decodes (baseline, progressive and optimised, RGB and L), reduces on load
// (draft, as thumbnail does), and writes RGB images into PDFs as JPEG. libjpeg's warnings are
// not errors, as in CPython: a truncated file fails with Pillow's OSError, or decodes with
// LOAD_TRUNCATED_IMAGES, and garbage in the entropy-coded data decodes to garbage. A fatal libjpeg
// error (here a Huffman table whose code counts add up to more than 256, inside headers Pillow's
// own parser accepts) ends the run in a trap, with libjpeg's message on stderr and in the error,
// where CPython raises OSError("broken data stream when reading image file"): WASI has no
// longjmp to return with (build.sh, 4c).
func TestPillowJPEG(t *testing.T) {
	src := jpegGradient()
	var gj bytes.Buffer
	if err := jpeg.Encode(&gj, src, &jpeg.Options{Quality: 90}); err != nil {
		t.Fatal(err)
	}
	good := gj.Bytes()
	goDecoded, err := jpeg.Decode(bytes.NewReader(good))
	if err != nil {
		t.Fatal(err)
	}
	sos := bytes.Index(good, []byte{0xff, 0xda})
	dht := bytes.Index(good, []byte{0xff, 0xc4})
	if sos < 0 || dht < 0 || dht > sos {
		t.Fatalf("Go's JPEG has no DHT before its SOS (%d, %d)", dht, sos)
	}
	scan := sos + 2 + int(binary.BigEndian.Uint16(good[sos+2:]))
	garbage := bytes.Clone(good)
	for i := scan + 10; i < scan+60; i++ {
		garbage[i] = byte(i*37) % 0xff // never 0xff: no marker
	}
	badDHT := bytes.Clone(good)
	for i := dht + 5; i < dht+5+16; i++ { // the 16 code counts of the first table
		badDHT[i] = 200
	}
	pts := [][2]int{{0, 0}, {63, 0}, {0, 47}, {63, 47}, {32, 24}, {10, 30}}
	ptsJSON, _ := json.Marshal(pts)
	tmp := t.TempDir()
	dir := skillDir(t, map[string]string{"go.jpg": string(good), "trunc.jpg": string(good[:len(good)-100]),
		"garbage.jpg": string(garbage), "bad.jpg": string(badDHT),
		"bad.py": "from PIL import Image\nim = Image.open('/skill/bad.jpg')\nprint('open', im.format, im.size, flush=True)\nim.load()\nprint('loaded')\n",
		"p.py": `import io, json
from PIL import Image, ImageFile, PdfParser
pts = [tuple(p) for p in json.loads(` + "'" + string(ptsJSON) + "'" + `)]
out = {}
g = Image.open("/skill/go.jpg")
out["go"] = [g.format, g.mode, g.size, [g.getpixel(p) for p in pts]]
im = Image.new("RGB", (64, 48))
im.putdata([(x * 4, y * 5, 128) for y in range(48) for x in range(64)])
def diff(a, b):
    return max(abs(p - q) for u, v in zip(a.getdata(), b.getdata()) for p, q in zip(u, v))
for name, img, kw in (("baseline", im, {"quality": 90}), ("progressive", im, {"quality": 90, "progressive": True, "optimize": True}),
                      ("gray", im.convert("L"), {"quality": 90}), ("420", im, {"quality": 75, "subsampling": 2})):
    b = io.BytesIO()
    img.save(b, "JPEG", **kw)
    back = Image.open(io.BytesIO(b.getvalue()))
    out[name] = [back.format, back.mode, back.size, diff(img.convert("RGB"), back.convert("RGB")), b.getvalue()[:2].hex()]
im.save("/tmp/out.jpg", quality=90)
d = Image.open("/skill/go.jpg")
d.draft("RGB", (16, 12))
out["draft"] = [d.size, d.load() is not None]
try:
    Image.open("/skill/trunc.jpg").load()
except OSError as e:
    out["trunc"] = [type(e).__name__, str(e).split(" (")[0]]
ImageFile.LOAD_TRUNCATED_IMAGES = True
t = Image.open("/skill/trunc.jpg")
t.load()
out["trunc-loaded"] = [t.size, t.getpixel((0, 0))]
ImageFile.LOAD_TRUNCATED_IMAGES = False
gb = Image.open("/skill/garbage.jpg")
gb.load()
out["garbage"] = [gb.size, gb.mode]
im.save("/tmp/out.pdf")
pdf = PdfParser.PdfParser("/tmp/out.pdf")
out["pdf"] = [len(pdf.pages), b"/DCTDecode" in open("/tmp/out.pdf", "rb").read()]
pdf.close()
print(json.dumps(out, separators=(",", ":")))
`})
	res, err := Run(context.Background(), compiledFor(t, 1024), Program{Dir: dir, Script: "p.py",
		FSConfig: func(f wazero.FSConfig) wazero.FSConfig { return f.WithDirMount(tmp, "/tmp") }}, newHost(t, &hostfuncs.Grant{}))
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("exit %d, %v\nstdout:\n%s\nstderr:\n%s", res.ExitCode, err, res.Stdout, res.Stderr)
	}
	var out map[string][]json.RawMessage
	if err := json.Unmarshal(res.Stdout, &out); err != nil {
		t.Fatalf("%v: %s", err, res.Stdout)
	}
	str := func(k string, i int) string { return string(out[k][i]) }

	// Go's JPEG, as Pillow decodes it, against Go's own decoding.
	if str("go", 0) != `"JPEG"` || str("go", 1) != `"RGB"` || str("go", 2) != `[64,48]` {
		t.Errorf("go.jpg: %s", res.Stdout)
	}
	var got [][3]uint8
	if err := json.Unmarshal(out["go"][3], &got); err != nil || len(got) != len(pts) {
		t.Fatalf("go.jpg pixels %s: %v", out["go"][3], err)
	}
	for i, p := range pts {
		c := color.RGBA{got[i][0], got[i][1], got[i][2], 255}
		if !near(c, goDecoded.At(p[0], p[1]), 8) || !near(c, src.At(p[0], p[1]), 12) {
			t.Errorf("go.jpg at %v: Pillow %v, Go %v, source %v", p, c, goDecoded.At(p[0], p[1]), src.At(p[0], p[1]))
		}
	}
	// Pillow's JPEGs, decoded by Pillow: within JPEG's loss of the image encoded.
	for k, mode := range map[string]string{"baseline": `"RGB"`, "progressive": `"RGB"`, "gray": `"L"`, "420": `"RGB"`} {
		var maxDiff int
		if len(out[k]) != 5 || json.Unmarshal(out[k][3], &maxDiff) != nil || str(k, 0) != `"JPEG"` || str(k, 1) != mode ||
			str(k, 2) != `[64,48]` || str(k, 4) != `"ffd8"` || maxDiff > 16 {
			t.Errorf("%s: %s", k, res.Stdout)
		}
	}
	// Pillow's JPEG file, decoded by Go.
	f, err := os.ReadFile(filepath.Join(tmp, "out.jpg"))
	if err != nil {
		t.Fatal(err)
	}
	pj, err := jpeg.Decode(bytes.NewReader(f))
	if err != nil {
		t.Fatal(err)
	}
	if pj.Bounds() != src.Bounds() {
		t.Errorf("out.jpg is %v", pj.Bounds())
	}
	for _, p := range pts {
		if !near(pj.At(p[0], p[1]), src.At(p[0], p[1]), 12) {
			t.Errorf("out.jpg at %v: %v, source %v", p, pj.At(p[0], p[1]), src.At(p[0], p[1]))
		}
	}
	for k, want := range map[string]string{"draft": `[[16,12],true]`, "trunc": `["OSError","image file is truncated"]`,
		"garbage": `[[64,48],"RGB"]`, "pdf": `[1,true]`} {
		if b, _ := json.Marshal(out[k]); string(b) != want {
			t.Errorf("%s: %s, want %s", k, b, want)
		}
	}
	var tl struct {
		Size  [2]int
		Pixel [3]uint8
	}
	if len(out["trunc-loaded"]) != 2 || json.Unmarshal(out["trunc-loaded"][0], &tl.Size) != nil ||
		json.Unmarshal(out["trunc-loaded"][1], &tl.Pixel) != nil || tl.Size != [2]int{64, 48} ||
		!near(color.RGBA{tl.Pixel[0], tl.Pixel[1], tl.Pixel[2], 255}, src.At(0, 0), 12) {
		t.Errorf("trunc-loaded: %s", out["trunc-loaded"])
	}

	// A fatal libjpeg error: the run ends in a trap that names libjpeg's message.
	res, err = Run(context.Background(), compiledFor(t, 1024), Program{Dir: dir, Script: "bad.py"}, newHost(t, &hostfuncs.Grant{}))
	e := wantKind(t, err, scripterr.SkillError)
	const msg = "libjpeg: Bogus Huffman table definition"
	if e.Message != "the interpreter aborted: "+msg || !strings.Contains(e.Err.Error(), "unreachable") ||
		string(res.Stdout) != "open JPEG (64, 48)\n" || string(res.Stderr) != msg+"\n" {
		t.Errorf("bad.jpg: %v\nstdout:\n%s\nstderr:\n%s", err, res.Stdout, res.Stderr)
	}
}
