import busboy from 'busboy';

/**
 * The parts of a multipart/form-data body by name, as the platform would read them: a field's
 * text, or for a file part its file name (its bytes are the platform's to judge). Parsed by
 * busboy (the parser under Express's multer) rather than by pattern, so that a part is known by
 * its `name` parameter alone (a `filename="file"` names no part `file`). Throws on a body
 * that is not multipart/form-data as its content-type says.
 */
export function multipartFields(contentType: string, raw: Buffer): Promise<Record<string, string>> {
  return new Promise((resolve, reject) => {
    const fields: Record<string, string> = {};
    let parser: busboy.Busboy;
    try {
      parser = busboy({ headers: { 'content-type': contentType } });
    } catch (error) {
      reject(error as Error);
      return;
    }
    parser.on('field', (name, value) => {
      fields[name] = value;
    });
    parser.on('file', (name, stream, info) => {
      fields[name] = info.filename ?? '';
      stream.resume();
    });
    parser.on('error', reject);
    parser.on('close', () => resolve(fields));
    parser.end(raw);
  });
}
