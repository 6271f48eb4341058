/**
 * A small valid PDF written by hand: one page per string, each drawn with Helvetica (a standard font, so
 * no font file is needed), with a correct cross-reference table. `encrypted` adds a standard security
 * handler whose password is not the empty one (readers ask for a password); `textless` draws a rectangle
 * instead of text (a scan without a text layer).
 */
export function buildPdf(
  pages: string[],
  options: { encrypted?: boolean; textless?: boolean } = {},
): Buffer {
  const objects: string[] = [];
  const add = (body: string) => objects.push(body) + 0;
  add('<< /Type /Catalog /Pages 2 0 R >>');
  add(''); // the page tree, written once the pages are known
  add('<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>');
  const kids: number[] = [];
  for (const text of pages) {
    const lines = text
      .split('\n')
      .map((line) => `(${line.replace(/[\\()]/g, (c) => `\\${c}`)}) Tj T*`);
    const stream = options.textless
      ? '10 10 100 100 re f'
      : `BT /F1 12 Tf 14 TL 72 720 Td ${lines.join(' ')} ET`;
    const content = add(
      `<< /Length ${Buffer.byteLength(stream, 'latin1')} >>\nstream\n${stream}\nendstream`,
    );
    kids.push(
      add(
        `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents ${content} 0 R >>`,
      ),
    );
  }
  objects[1] = `<< /Type /Pages /Kids [${kids.map((id) => `${id} 0 R`).join(' ')}] /Count ${kids.length} >>`;
  const encrypt = options.encrypted
    ? add(
        `<< /Filter /Standard /V 1 /R 2 /Length 40 /P -4 /O <${'ab'.repeat(32)}> /U <${'cd'.repeat(32)}> >>`,
      )
    : null;

  let pdf = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((body, index) => {
    offsets.push(Buffer.byteLength(pdf, 'latin1'));
    pdf += `${index + 1} 0 obj\n${body}\nendobj\n`;
  });
  const xref = Buffer.byteLength(pdf, 'latin1');
  pdf += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((offset) => `${String(offset).padStart(10, '0')} 00000 n \n`).join('')}`;
  const id = '<0123456789abcdef0123456789abcdef>';
  pdf += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R${encrypt ? ` /Encrypt ${encrypt} 0 R /ID [${id} ${id}]` : ''} >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(pdf, 'latin1');
}
