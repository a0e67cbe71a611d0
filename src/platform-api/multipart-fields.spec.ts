import { multipartFields } from './multipart-fields';

const TYPE = 'multipart/form-data; boundary=b';
const part = (disposition: string, value: string) =>
  `--b\r\nContent-Disposition: form-data; ${disposition}\r\n\r\n${value}\r\n`;

describe('multipartFields', () => {
  it('names a part by its name parameter, a file part by its file name', async () => {
    const body = part('name="file"; filename="w.png"', 'PNG') + part('name="default"', 'true');
    await expect(multipartFields(TYPE, Buffer.from(`${body}--b--\r\n`))).resolves.toEqual({
      file: 'w.png',
      default: 'true',
    });
  });

  it('does not take a filename="file" for a part named file', async () => {
    const body = part('name="default"; filename="file"', 'x');
    await expect(multipartFields(TYPE, Buffer.from(`${body}--b--\r\n`))).resolves.toEqual({
      default: 'file',
    });
  });

  it('refuses a body cut short, or one without its boundary', async () => {
    await expect(multipartFields(TYPE, Buffer.from(part('name="a"', 'x')))).rejects.toThrow();
    await expect(multipartFields('multipart/form-data', Buffer.from('--b--\r\n'))).rejects.toThrow(
      /Boundary/,
    );
  });
});
