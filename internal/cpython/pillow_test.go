package cpython

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"github.com/tetratelabs/wazero"

	"github.com/skillbox-dev/skillbox/hostfuncs"
	"github.com/skillbox-dev/skillbox/internal/interleave"
)

// Pillow is compiled in (PIL._imaging, _imagingmath, _imagingmorph, over zlib and libjpeg): what
// the published image skills do with it works — draw, write text in the default font, PNG and GIF
// both ways, resize, convert — and the formats whose libraries are left out (WebP, TIFF's codecs,
// TrueType fonts) fail with Pillow's own errors, not a trap. Go's own codecs check both
// directions: Pillow reads Go's PNG, and Go decodes the PNG and GIF Pillow wrote. A PDF (of
// palette images) is written and read back from a file, which PIL.PdfParser reads without mmap
// here. JPEG is TestPillowJPEG's.
func TestPillow(t *testing.T) {
	var in bytes.Buffer
	src := image.NewNRGBA(image.Rect(0, 0, 3, 2))
	src.Set(0, 0, color.NRGBA{10, 20, 30, 255})
	src.Set(2, 1, color.NRGBA{200, 100, 50, 128})
	if err := png.Encode(&in, src); err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	dir := skillDir(t, map[string]string{"in.png": in.String(), "p.py": `import io
from PIL import Image, ImageDraw, ImageFont, ImageFilter, ImageOps, features
print("module", Image.core.__spec__.origin, Image.__version__, features.check("zlib"), features.check("jpg"), features.check("freetype2"))
im = Image.new("RGB", (64, 32), "white")
d = ImageDraw.Draw(im)
d.rectangle((2, 2, 10, 10), fill=(255, 0, 0), outline=(0, 128, 0))
d.line((0, 31, 63, 31), fill=(0, 0, 255))
d.text((14, 4), "Hi", fill=(0, 0, 0))
font = ImageFont.load_default()
text = im.crop((14, 4, 14 + font.getbbox("Hi")[2], 4 + font.getbbox("Hi")[3]))
print("draw", im.getpixel((2, 2)), im.getpixel((5, 5)), im.getpixel((30, 31)), im.getpixel((40, 20)),
      font.getbbox("Hi"), (0, 0, 0) in [c for _, c in text.getcolors()])
b = io.BytesIO()
im.save(b, "PNG")
png = b.getvalue()
back = Image.open(io.BytesIO(png))
print("png", png[:8], back.format, back.mode, back.size, back.tobytes() == im.tobytes())
im.save("/tmp/out.png")
g = Image.open("/skill/in.png")
print("go png", g.mode, g.size, g.getpixel((0, 0)), g.getpixel((2, 1)))
small = im.resize((16, 8))
print("resize", small.size, small.getpixel((1, 1)), im.resize((128, 64), Image.NEAREST).getpixel((10, 10)),
      ImageOps.contain(im, (32, 32)).size)
print("convert", im.convert("L").getpixel((5, 5)), im.convert("1").mode, im.convert("RGBA").getpixel((5, 5)),
      im.convert("P", palette=Image.ADAPTIVE, colors=4).mode, ImageOps.grayscale(im).mode,
      im.filter(ImageFilter.GaussianBlur(1)).size)
frames = [Image.new("RGB", (8, 8), c) for c in ("red", "lime", "blue")]
b = io.BytesIO()
frames[0].save(b, "GIF", save_all=True, append_images=frames[1:], duration=100, loop=0)
gif = Image.open(io.BytesIO(b.getvalue()))
mode, seen = gif.mode, []
for i in range(gif.n_frames):
    gif.seek(i)
    seen.append(gif.convert("RGB").getpixel((4, 4)))
print("gif", b.getvalue()[:6], gif.format, mode, gif.n_frames, seen)
frames[2].save("/tmp/out.gif")
from PIL import PdfParser
im.convert("P").save("/tmp/out.pdf", save_all=True, append_images=[frames[0].convert("P")])
pdf = PdfParser.PdfParser("/tmp/out.pdf")
print("pdf", open("/tmp/out.pdf", "rb").read(8), len(pdf.pages))
pdf.close()
try:
    ImageFont.truetype("DejaVuSans.ttf", 12)
except ImportError as e:
    print("truetype", type(e).__name__, e)
try:
    Image.new("RGB", (20000, 20000))
except MemoryError as e:
    print("big", type(e).__name__)
`})
	res, err := Run(context.Background(), compiledFor(t, 1024), Program{Dir: dir, Script: "p.py",
		FSConfig: func(f wazero.FSConfig) wazero.FSConfig { return f.WithDirMount(tmp, "/tmp") }}, newHost(t, &hostfuncs.Grant{}))
	if err != nil {
		t.Fatal(err)
	}
	// Packages, which pydeps meets requirements of Pillow with, is the version built in.
	want := `module built-in ` + Packages["pillow"] + ` True True False
draw (0, 128, 0) (255, 0, 0) (0, 0, 255) (255, 255, 255) (0, 0, 12, 11) True
png b'\x89PNG\r\n\x1a\n' PNG RGB (64, 32) True
go png RGBA (3, 2) (10, 20, 30, 255) (200, 100, 50, 128)
resize (16, 8) (249, 0, 0) (255, 0, 0) (32, 16)
convert 76 1 (255, 0, 0, 255) P L (64, 32)
gif b'GIF89a' GIF P 3 [(255, 0, 0), (0, 255, 0), (0, 0, 255)]
pdf b'%PDF-1.4' 2
truetype ImportError The _imagingft C module is not installed
big MemoryError
`
	if got := string(res.Stdout); got != want || res.ExitCode != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nwant:\n%s\nstderr:\n%s", res.ExitCode, got, want, res.Stderr)
	}
	f, err := os.Open(filepath.Join(tmp, "out.png"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		x, y int
		want color.RGBA
	}{{5, 5, color.RGBA{255, 0, 0, 255}}, {30, 31, color.RGBA{0, 0, 255, 255}}, {40, 20, color.RGBA{255, 255, 255, 255}}} {
		if got := color.RGBAModel.Convert(p.At(c.x, c.y)); got != c.want || p.Bounds() != image.Rect(0, 0, 64, 32) {
			t.Errorf("out.png %v at (%d, %d): %v, want %v", p.Bounds(), c.x, c.y, got, c.want)
		}
	}
	gb, err := os.ReadFile(filepath.Join(tmp, "out.gif"))
	if err != nil {
		t.Fatal(err)
	}
	gi, err := gif.Decode(bytes.NewReader(gb))
	if err != nil {
		t.Fatal(err)
	}
	if got := color.RGBAModel.Convert(gi.At(4, 4)); got != (color.RGBA{0, 0, 255, 255}) || gi.Bounds() != image.Rect(0, 0, 8, 8) {
		t.Errorf("out.gif %v at (4, 4): %v", gi.Bounds(), got)
	}
}

// BenchmarkImportPillow measures what importing Pillow adds to a run: a skill that imports
// PIL.Image and PIL.ImageDraw, and one that imports PIL.Image and decodes a 64×48 JPEG, against
// one that imports nothing, interleaved (whole runs, read the ratios), and the import (and
// decode) itself as the guest times it (perf_counter, in ms).
//
//	go test -run '^$' -bench BenchmarkImportPillow -benchtime 50x ./internal/cpython/
func BenchmarkImportPillow(b *testing.B) {
	c := compiledFor(b, 1024)
	bare := skillDir(b, map[string]string{"execute.py": "import time\ndef execute(args, ctx):\n    t = time.perf_counter()\n    return (time.perf_counter() - t) * 1000\n"})
	pil := skillDir(b, map[string]string{"execute.py": "import time\ndef execute(args, ctx):\n    t = time.perf_counter()\n    from PIL import Image, ImageDraw\n    return (time.perf_counter() - t) * 1000\n"})
	var jpg bytes.Buffer
	if err := jpeg.Encode(&jpg, jpegGradient(), &jpeg.Options{Quality: 90}); err != nil {
		b.Fatal(err)
	}
	dec := skillDir(b, map[string]string{"in.jpg": jpg.String(), "execute.py": "import time\ndef execute(args, ctx):\n    t = time.perf_counter()\n    from PIL import Image\n    Image.open('/skill/in.jpg').load()\n    return (time.perf_counter() - t) * 1000\n"})
	h := newHost(b, &hostfuncs.Grant{})
	guest := map[string][]float64{}
	run := func(name, dir string) func() {
		return func() {
			res, err := Run(context.Background(), c, Program{Dir: dir}, h)
			if err != nil {
				b.Fatal(err)
			}
			var ms float64
			if err := json.Unmarshal(res.Value, &ms); err != nil {
				b.Fatalf("%s: %s %v", name, res.Value, err)
			}
			guest[name] = append(guest[name], ms)
		}
	}
	p50 := interleave.Run(b, interleave.Contender{Name: "bare", F: run("bare", bare)}, interleave.Contender{Name: "pil", F: run("pil", pil)},
		interleave.Contender{Name: "jpeg", F: run("jpeg", dec)})
	b.ReportMetric(p50["pil"]/p50["bare"], "pil/bare")
	b.ReportMetric(p50["jpeg"]/p50["bare"], "jpeg/bare")
	interleave.Medians(b, "import-ms", map[string][]float64{"pil": guest["pil"], "jpeg": guest["jpeg"]})
}
