// Writes the inputs that the documented uses of published skills' programs work on (see
// uses.txt beside this file) into the directory named by the first argument: an Office
// document of each kind, a PDF with a fillable form and one without, the JSON files the pdf
// skill's instructions have the model write, a page image, a skill-creator workspace with
// graded runs, a description-optimisation history, and a small skill to package.
//
//   node fixtures.mjs DIR
//
// Everything here is made by libraries written for the format, so the programs meet files as
// users' tools make them, not files shaped to pass.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { deflateSync } from "node:zlib";
import { Document, Packer, Paragraph, TextRun, HeadingLevel } from "docx";
import ExcelJS from "exceljs";
import JSZip from "jszip";
import { PDFDocument, PDFName, StandardFonts } from "pdf-lib";
import PptxGenJS from "pptxgenjs";

const out = process.argv[2];
if (!out) {
  console.error("usage: node fixtures.mjs DIR");
  process.exit(2);
}
mkdirSync(out, { recursive: true });
const put = (name, data) => {
  mkdirSync(join(out, name, ".."), { recursive: true });
  writeFileSync(join(out, name), typeof data === "string" ? data : Buffer.from(data));
};
const json = (name, v) => put(name, JSON.stringify(v, null, 2) + "\n");

// document.docx: a heading and two paragraphs, as a report would have.
const doc = new Document({
  creator: "fixtures",
  sections: [{
    children: [
      new Paragraph({ text: "Quarterly report", heading: HeadingLevel.HEADING_1 }),
      new Paragraph({ children: [new TextRun("Revenue grew by "), new TextRun({ text: "12%", bold: true }), new TextRun(" over the quarter.")] }),
      new Paragraph("Costs held steady; the outlook is unchanged."),
    ],
  }],
});
// The docx library always writes an empty comments part; Word writes one only with comments,
// and the docx skill's comment.py adds its companions only when there is none. Take it out.
const docz = await JSZip.loadAsync(await Packer.toBuffer(doc));
docz.remove("word/comments.xml");
docz.remove("word/_rels/comments.xml.rels");
const drels = "word/_rels/document.xml.rels";
docz.file(drels, (await docz.file(drels).async("string")).replace(/<Relationship [^>]*Target="comments.xml"\/>/, ""));
docz.file("[Content_Types].xml", (await docz.file("[Content_Types].xml").async("string")).replace(/<Override [^>]*PartName="\/word\/comments.xml"[^>]*\/>/, ""));
put("document.docx", await docz.generateAsync({ type: "nodebuffer", compression: "DEFLATE" }));

// presentation.pptx: a title slide and a bulleted slide.
const pptx = new PptxGenJS();
pptx.addSlide().addText("Quarterly review", { x: 1, y: 1, w: 8, h: 1, fontSize: 32 });
pptx.addSlide().addText([{ text: "Revenue up 12%", options: { bullet: true } }, { text: "Costs flat", options: { bullet: true } }], { x: 1, y: 1, w: 8, h: 3 });
put("presentation.pptx", await pptx.write({ outputType: "nodebuffer" }));

// workbook.xlsx: figures and a formula over them.
const wb = new ExcelJS.Workbook();
const ws = wb.addWorksheet("Sales");
ws.addRow(["Month", "Revenue"]);
[["Jan", 100], ["Feb", 120], ["Mar", 150]].forEach((r) => ws.addRow(r));
ws.getCell("B5").value = { formula: "SUM(B2:B4)" };
put("workbook.xlsx", await wb.xlsx.writeBuffer());

// form.pdf: a US Letter page with a text field, a checkbox, a radio group and a dropdown.
const form = await PDFDocument.create();
const font = await form.embedFont(StandardFonts.Helvetica);
const page = form.addPage([612, 792]);
page.drawText("Last Name", { x: 43, y: 719, size: 10, font });
const f = form.getForm();
f.createTextField("last_name").addToPage(page, { x: 92, y: 713, width: 168, height: 16 });
page.drawText("Adult", { x: 43, y: 689, size: 10, font });
f.createCheckBox("adult").addToPage(page, { x: 92, y: 685, width: 12, height: 12 });
const radio = f.createRadioGroup("contact");
radio.addOptionToPage("email", page, { x: 92, y: 655, width: 12, height: 12 });
radio.addOptionToPage("phone", page, { x: 140, y: 655, width: 12, height: 12 });
const drop = f.createDropdown("state");
drop.addOptions(["CA", "NY", "TX"]);
drop.addToPage(page, { x: 92, y: 620, width: 80, height: 16 });
// Acrobat, and most forms in the wild, keep a field with one widget as one dictionary, field
// and widget merged; pdf-lib writes the widget as the field's kid. Merge them, as the pdf
// skill's programs expect.
for (const field of [f.getTextField("last_name"), f.getCheckBox("adult"), f.getDropdown("state")]) {
  const fd = field.acroField.dict;
  const [widget] = field.acroField.getWidgets();
  const wref = form.context.getObjectRef(widget.dict);
  for (const [k, v] of widget.dict.entries()) if (k.asString() !== "/Parent") fd.set(k, v);
  fd.delete(PDFName.of("Kids"));
  const annots = page.node.Annots();
  annots.set(annots.indexOf(wref), form.context.getObjectRef(fd));
}
put("form.pdf", await form.save());

// plain.pdf: the same labels with lines to write on, and no form fields.
const plain = await PDFDocument.create();
const pfont = await plain.embedFont(StandardFonts.Helvetica);
const pp = plain.addPage([612, 792]);
pp.drawText("Last Name", { x: 43, y: 719, size: 10, font: pfont });
pp.drawLine({ start: { x: 92, y: 713 }, end: { x: 260, y: 713 }, thickness: 0.5 });
pp.drawText("Yes", { x: 260, y: 582, size: 10, font: pfont });
pp.drawRectangle({ x: 285, y: 587, width: 8, height: 8, borderWidth: 0.5 });
put("plain.pdf", await plain.save());

// What the model writes by the pdf skill's instructions: values for the form's fields, and
// label/entry boxes (in PDF coordinates, y down) for the form without fields.
json("field_values.json", [
  { field_id: "last_name", description: "The user's last name", page: 1, value: "Simpson" },
  { field_id: "adult", description: "Checked when the user is 18 or over", page: 1, value: "/Yes" },
  { field_id: "contact", description: "How to contact the user", page: 1, value: "/1" },
  { field_id: "state", description: "State of residence", page: 1, value: "NY" },
]);
json("fields.json", {
  pages: [{ page_number: 1, pdf_width: 612, pdf_height: 792 }],
  form_fields: [
    { page_number: 1, description: "Last name entry field", field_label: "Last Name", label_bounding_box: [43, 63, 87, 73], entry_bounding_box: [92, 63, 260, 79], entry_text: { text: "Smith", font_size: 10 } },
    { page_number: 1, description: "Yes checkbox", field_label: "Yes", label_bounding_box: [260, 200, 280, 210], entry_bounding_box: [285, 197, 293, 205], entry_text: { text: "X", font_size: 8 } },
  ],
});

// page-1.png: a white page image at 100 dpi, as a PDF page rendered to an image.
put("page-1.png", png(850, 1100));

// A skill-creator workspace: one eval, graded with and without the skill.
const grading = (passed) => ({
  expectations: [
    { text: "The output names the quarter", passed: true, evidence: "First line: 'Q3 report'" },
    { text: "The output has a total", passed, evidence: passed ? "Total row present" : "No total row" },
  ],
  summary: { passed: passed ? 2 : 1, failed: passed ? 0 : 1, total: 2, pass_rate: passed ? 1.0 : 0.5 },
  execution_metrics: { tool_calls: { Read: 2, Bash: 3 }, total_tool_calls: 5, total_steps: 4, errors_encountered: 0, output_chars: 800, transcript_chars: 2400 },
  timing: { executor_duration_seconds: 40.0, grader_duration_seconds: 8.0, total_duration_seconds: 48.0 },
});
for (const [cfg, passed] of [["with_skill", true], ["without_skill", false]]) {
  for (const run of ["run-1", "run-2"]) {
    const dir = `skill-workspace/iteration-1/eval-0/${cfg}/${run}`;
    json(`${dir}/grading.json`, grading(passed));
    json(`${dir}/timing.json`, { total_tokens: 5200, duration_ms: 40000, total_duration_seconds: 40.0 });
    put(`${dir}/outputs/report.md`, `# Q3 report\n\n${passed ? "Total: 370\n" : ""}`);
  }
}
json("skill-workspace/iteration-1/eval-0/eval_metadata.json", { eval_id: 0, eval_name: "quarterly-report", prompt: "Write the Q3 report from sales.csv", assertions: ["The output names the quarter", "The output has a total"] });

// What run_loop.py writes: a description-optimisation history.
const result = (query, should_trigger, pass) => ({ query, should_trigger, pass, triggers: pass === should_trigger ? 3 : 0, runs: 3 });
json("loop.json", {
  holdout: 0.4,
  history: [1, 2].map((iteration) => ({
    iteration,
    description: iteration === 1 ? "Makes reports." : "Writes quarterly business reports from sales data.",
    train_passed: iteration, train_total: 2, test_passed: iteration - 1, test_total: 1,
    train_results: [result("write the Q3 report", true, true), result("what is 2+2", false, iteration === 2)],
    test_results: [result("summarise sales for the board", true, iteration === 2)],
  })),
});

// A small skill to validate and package.
put("my-skill/SKILL.md", "---\nname: my-skill\ndescription: Writes quarterly reports from sales data. Use when asked for a sales report.\n---\n\n# My skill\n\nRead the sales figures and write the report.\n");
put("my-skill/scripts/total.py", "import sys\nprint(sum(float(x) for x in sys.argv[1:]))\n");

// png returns a white RGB image of w x h pixels, encoded by hand: PNG is zlib over rows.
function png(w, h) {
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc = (buf) => {
    let c = 0xffffffff;
    for (const b of buf) c = crcTable[(c ^ b) & 0xff] ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (type, data) => {
    const len = Buffer.alloc(4); len.writeUInt32BE(data.length);
    const td = Buffer.concat([Buffer.from(type), data]);
    const c = Buffer.alloc(4); c.writeUInt32BE(crc(td));
    return Buffer.concat([len, td, c]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(w, 0); ihdr.writeUInt32BE(h, 4);
  ihdr[8] = 8; ihdr[9] = 2; // 8-bit RGB
  const row = Buffer.alloc(1 + 3 * w, 0xff); row[0] = 0;
  const raw = Buffer.concat(Array(h).fill(row));
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk("IHDR", ihdr), chunk("IDAT", deflateSync(raw)), chunk("IEND", Buffer.alloc(0))]);
}
