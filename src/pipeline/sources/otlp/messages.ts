// The OTLP messages Weir reads and writes, from the protobufjs descriptor of the vendored
// official definitions (proto/, README there): the logs export request and response, and
// google.rpc.Status, the body of every OTLP/HTTP error answer.
import protobuf from 'protobufjs';
import descriptor from './descriptor.json' with { type: 'json' };

const root = protobuf.Root.fromJSON(descriptor as protobuf.INamespace);

export const ExportLogsServiceRequest = root.lookupType(
  'opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest',
);
export const ExportLogsServiceResponse = root.lookupType(
  'opentelemetry.proto.collector.logs.v1.ExportLogsServiceResponse',
);
export const RpcStatus = root.lookupType('google.rpc.Status');
/** SeverityNumber's names to values (OTLP/JSON senders may write an enum by name). */
export const SEVERITY_NUMBERS: Readonly<Record<string, number>> = root.lookupEnum(
  'opentelemetry.proto.logs.v1.SeverityNumber',
).values;

/** The two encodings of OTLP/HTTP, by the request's Content-Type (parameters ignored). */
export type OtlpEncoding = 'protobuf' | 'json';

export function otlpEncoding(contentType: string | undefined): OtlpEncoding | undefined {
  const type = contentType?.split(';')[0]?.trim().toLowerCase();
  if (type === 'application/x-protobuf') return 'protobuf';
  if (type === 'application/json') return 'json';
  return undefined;
}

export const OTLP_CONTENT_TYPE: Record<OtlpEncoding, string> = {
  protobuf: 'application/x-protobuf',
  json: 'application/json',
};

/** ExportLogsServiceResponse: empty when everything was accepted, else partial_success. */
export function exportLogsResponse(encoding: OtlpEncoding, rejected: number, errorMessage: string): Buffer {
  const partial = rejected > 0 || errorMessage !== '';
  if (encoding === 'json') {
    // OTLP/JSON: lowerCamelCase keys, int64 as a decimal string.
    const body = partial
      ? { partialSuccess: { rejectedLogRecords: String(rejected), errorMessage } }
      : ({} as Record<string, unknown>);
    return Buffer.from(JSON.stringify(body));
  }
  const message = ExportLogsServiceResponse.create(
    partial ? { partialSuccess: { rejectedLogRecords: rejected, errorMessage } } : {},
  );
  return Buffer.from(ExportLogsServiceResponse.encode(message).finish());
}

/** gRPC status codes for the HTTP statuses an OTLP/HTTP answer carries (google.rpc.Code). */
export function grpcCode(httpStatus: number): number {
  if (httpStatus === 401) return 16; // UNAUTHENTICATED
  if (httpStatus === 403) return 7; // PERMISSION_DENIED
  if (httpStatus === 429 || httpStatus === 413) return 8; // RESOURCE_EXHAUSTED
  if (httpStatus === 503) return 14; // UNAVAILABLE
  if (httpStatus >= 400 && httpStatus < 500) return 3; // INVALID_ARGUMENT
  return 13; // INTERNAL
}

/** google.rpc.Status, the body of an OTLP/HTTP 4xx or 5xx answer, in the request's encoding. */
export function statusBody(encoding: OtlpEncoding, httpStatus: number, message: string): Buffer {
  const code = grpcCode(httpStatus);
  if (encoding === 'json') return Buffer.from(JSON.stringify({ code, message }));
  return Buffer.from(RpcStatus.encode(RpcStatus.create({ code, message })).finish());
}
