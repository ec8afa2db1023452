// The Sigma logsources of network sensors and gateways (docs/sigma.md): Zeek's logs, and the
// categories firewall, dns and proxy over the firewalls, resolvers and web gateways Weir has
// built-in mappings for. Zeek's Sigma fields are Zeek's own keys. The categories use Sigma's
// generic names (`src_ip`, `query`, `c-useragent`...), and each source's variant says which key of
// the vendor's record the mapping reads for it (`raw`), so a category has one variant per source.
//
// Zeek writes `id.orig_h` and its siblings as keys that contain a dot, not as nested objects: the
// mapping reads them as `["id.orig_h"]`, and so does `raw`. For the syslog text streams (PAN-OS,
// FortiGate, Cisco ASA, Zscaler) `raw` is the key the mapping's parse steps give (`pan.src`,
// `srcip`, `asa.src_addr`...).
import type { Condition } from '../../conditions/types.js';
import {
  f,
  productIs,
  type SigmaField,
  type SigmaLogsource,
  type SigmaSource,
  type SigmaVariant,
} from './logsource-types.js';

const from = (mapping: string, ...rules: string[]): SigmaSource => ({ mapping, rules });
const codes = (...ids: string[]): Condition => ({ field: 'metadata.event_code', op: 'in', value: ids });

/** Source and destination address and port, from the keys the source names them by. */
function endpoints(src: string, dst: string, srcPort?: string, dstPort?: string): Record<string, SigmaField> {
  return {
    src_ip: f('src_endpoint.ip', src),
    dst_ip: f('dst_endpoint.ip', dst),
    ...(srcPort ? { src_port: f('src_endpoint.port', srcPort) } : {}),
    ...(dstPort ? { dst_port: f('dst_endpoint.port', dstPort) } : {}),
  };
}

// ---------------------------------------------------------------------------------------------
// Zeek (zeek / logs): one stream, every log; each service is the rule of its log.

const ZEEK = 'zeek.logs';
const isZeek = productIs('Zeek');
/** The connection of every Zeek log (`id.orig_h` ... and the connection's `uid`). */
const ZEEK_CONN_ID = {
  'id.orig_h': f('src_endpoint.ip', '["id.orig_h"]'),
  'id.orig_p': f('src_endpoint.port', '["id.orig_p"]'),
  'id.resp_h': f('dst_endpoint.ip', '["id.resp_h"]'),
  'id.resp_p': f('dst_endpoint.port', '["id.resp_p"]'),
  uid: f('metadata.correlation_uid'),
};

const ZEEK_DNS: SigmaVariant = {
  classes: [4003],
  where: [isZeek],
  sources: [from(ZEEK, 'dns with a response', 'dns without a response')],
  note: "dns.log. `answers` is every answer's data; a query without a response has none.",
  fields: {
    ...ZEEK_CONN_ID,
    query: f('query.hostname'),
    qtype_name: f('query.type'),
    qclass_name: f('query.class'),
    trans_id: f('query.packet_uid'),
    answers: f('answers[*].rdata'),
    proto: f('connection_info.protocol_name'),
  },
};

export const NETWORK_LOGSOURCES: readonly SigmaLogsource[] = [
  {
    product: 'zeek',
    service: 'conn',
    note: 'The built-in zeek / logs mapping.',
    variants: [
      {
        classes: [4001],
        // ssl.log and weird.log records are Network Activity too; the conn rule's event id ends in ":conn".
        where: [isZeek, { field: 'metadata.uid', op: 'suffix', value: ':conn' }],
        sources: [from(ZEEK, 'conn')],
        note: 'conn.log. `conn_state` is `status_code`, `history` `connection_info.flag_history`.',
        fields: {
          ...ZEEK_CONN_ID,
          proto: f('connection_info.protocol_name'),
          service: f('app_protocol_name'),
          conn_state: f('status_code'),
          history: f('connection_info.flag_history'),
          community_id: f('connection_info.community_uid'),
          orig_bytes: f('traffic.bytes_out'),
          resp_bytes: f('traffic.bytes_in'),
          orig_pkts: f('traffic.packets_out'),
          resp_pkts: f('traffic.packets_in'),
          missed_bytes: f('traffic.bytes_missed'),
          orig_l2_addr: f('src_endpoint.mac'),
          resp_l2_addr: f('dst_endpoint.mac'),
        },
      },
    ],
  },
  { product: 'zeek', service: 'dns', note: 'The built-in zeek / logs mapping.', variants: [ZEEK_DNS] },
  {
    product: 'zeek',
    service: 'http',
    note: 'The built-in zeek / logs mapping.',
    variants: [
      {
        classes: [4002],
        where: [isZeek],
        sources: [from(ZEEK, 'http')],
        note: 'http.log. `method` is written for the standard methods only (CONNECT, DELETE, GET, HEAD, OPTIONS, POST, PUT, TRACE, PATCH).',
        fields: {
          ...ZEEK_CONN_ID,
          method: f('http_request.http_method'),
          host: f('http_request.url.hostname'),
          uri: f('http_request.url.path'),
          referrer: f('http_request.referrer'),
          version: f('http_request.version'),
          user_agent: f('http_request.user_agent'),
          request_body_len: f('http_request.length'),
          status_code: f('http_response.code'),
          status_msg: f('http_response.message'),
          response_body_len: f('http_response.length'),
        },
      },
    ],
  },
  {
    product: 'zeek',
    service: 'smb_files',
    note: 'The built-in zeek / logs mapping.',
    variants: [
      {
        classes: [4006],
        // smb_mapping.log records are SMB Activity too; the smb_files rule's event id holds ":smb_files:".
        where: [isZeek, { field: 'metadata.uid', op: 'contains', value: ':smb_files:' }],
        sources: [from(ZEEK, 'smb_files')],
        note: 'smb_files.log: `name` (the file as the client named it) is `file.path`, `path` (the share) `share`.',
        fields: {
          ...ZEEK_CONN_ID,
          uid: f('connection_info.uid'),
          action: f('command'),
          name: f('file.path'),
          path: f('share'),
          fuid: f('file.uid'),
          size: f('file.size'),
        },
      },
    ],
  },
  {
    product: 'zeek',
    service: 'rdp',
    note: 'The built-in zeek / logs mapping.',
    variants: [
      {
        classes: [4005],
        where: [isZeek],
        sources: [from(ZEEK, 'rdp')],
        note: 'rdp.log.',
        fields: {
          ...ZEEK_CONN_ID,
          cookie: f('identifier_cookie'),
          result: f('status_detail'),
          client_name: f('src_endpoint.name'),
          client_build: f('protocol_ver'),
          keyboard_layout: f('keyboard_info.keyboard_layout'),
        },
      },
    ],
  },
  {
    product: 'zeek',
    service: 'kerberos',
    note: 'The built-in zeek / logs mapping.',
    variants: [
      {
        classes: [3002],
        // ntlm.log records are Authentication too, with the NTLM protocol.
        where: [isZeek, { field: 'auth_protocol_id', op: 'eq', value: 2 }],
        sources: [from(ZEEK, 'kerberos')],
        note: 'kerberos.log: `service` is `service.name`, `error_msg` `status_detail`.',
        fields: { ...ZEEK_CONN_ID, service: f('service.name'), error_msg: f('status_detail') },
      },
    ],
  },
  {
    category: 'firewall',
    note: "Connections a firewall allowed or denied. The firewall's own action word (allow, accept, deny...) is not kept by the mappings (they write `action_id` from it, or a constant), so `action` is mapped only where the mapping reads it through a lookup (Cisco ASA access-list hits).",
    variants: [
      {
        classes: [4001],
        where: [productIs('PAN-OS'), { field: 'metadata.log_name', op: 'eq', value: 'TRAFFIC' }],
        sources: [from('paloalto_ngfw.syslog', 'TRAFFIC')],
        note: 'PAN-OS TRAFFIC logs.',
        fields: endpoints('pan.src', 'pan.dst', 'pan.sport', 'pan.dport'),
      },
      {
        classes: [4001],
        where: [productIs('FortiGate'), { field: 'metadata.log_name', op: 'prefix', value: 'traffic/' }],
        sources: [from('fortinet_fortigate.syslog', 'traffic')],
        note: 'FortiGate traffic logs.',
        fields: endpoints('srcip', 'dstip', 'srcport', 'dstport'),
      },
      {
        classes: [4001],
        where: [
          productIs('Adaptive Security Appliance'),
          codes('302013', '302014', '302015', '302016', '302017', '302018', '302020', '302021'),
        ],
        sources: [from('cisco_asa.syslog', 'connection built or torn down (TCP, UDP, SCTP, GRE, ICMP)')],
        note: "Cisco ASA and FTD connections built and torn down: the source is the side that opened the connection (the message's `for` side, or its `to` side for an outbound connection).",
        fields: endpoints('asa.for_addr', 'asa.to_addr', 'asa.for_port', 'asa.to_port'),
      },
      {
        classes: [4001],
        where: [
          productIs('Adaptive Security Appliance'),
          codes(
            '106001',
            '106006',
            '106007',
            '106010',
            '106012',
            '106014',
            '106015',
            '106016',
            '106017',
            '106020',
            '106021',
            '106022',
            '106023',
            '313001',
            '313004',
            '419002',
            '710003',
            '710005',
          ),
        ],
        sources: [from('cisco_asa.syslog', 'denied by the firewall')],
        note: 'Cisco ASA and FTD denies (interface, ACL, ICMP, to-the-box).',
        fields: endpoints('asa.src_addr', 'asa.dst_addr', 'asa.src_port', 'asa.dst_port'),
      },
      {
        classes: [4001],
        where: [productIs('Adaptive Security Appliance'), codes('106100')],
        sources: [from('cisco_asa.syslog', 'access list hit')],
        note: "Cisco ASA and FTD access-list hits (106100): `action` is the list's permitted, est-allowed or denied.",
        fields: {
          ...endpoints('asa.src_addr', 'asa.dst_addr', 'asa.src_port', 'asa.dst_port'),
          action: { path: 'action_id', raw: 'asa.acl_action', values: { permitted: 1, 'est-allowed': 1, denied: 2 } },
        },
      },
      {
        classes: [4001],
        where: [productIs('Zscaler Internet Access')],
        sources: [from('zscaler_zia.web', 'firewall sessions (NSS firewall feed)')],
        note: 'Zscaler NSS firewall sessions.',
        fields: endpoints('csip', 'cdip', 'csport', 'cdport'),
      },
    ],
  },
  {
    category: 'dns',
    note: "DNS queries and answers seen by a sensor or logged by a resolver or a DNS filter. `answer` is every answer's data, `record_type` the query's type (A, TXT...).",
    variants: [
      {
        ...ZEEK_DNS,
        note: 'Zeek dns.log.',
        fields: {
          query: f('query.hostname'),
          record_type: f('query.type', 'qtype_name'),
          answer: f('answers[*].rdata', 'answers'),
          src_ip: f('src_endpoint.ip', '["id.orig_h"]'),
          src_port: f('src_endpoint.port', '["id.orig_p"]'),
          dst_ip: f('dst_endpoint.ip', '["id.resp_h"]'),
          dst_port: f('dst_endpoint.port', '["id.resp_p"]'),
        },
      },
      {
        classes: [4003],
        where: [productIs('Suricata')],
        sources: [from('suricata.eve', 'dns request', 'dns response')],
        note: 'Suricata EVE dns records (requests and responses).',
        fields: {
          query: f('query.hostname', 'dns.rrname'),
          record_type: f('query.type', 'dns.rrtype'),
          answer: f('answers[*].rdata', 'dns.answers[*].rdata'),
          src_ip: f('src_endpoint.ip'),
          src_port: f('src_endpoint.port'),
          dst_ip: f('dst_endpoint.ip', 'dest_ip'),
          dst_port: f('dst_endpoint.port', 'dest_port'),
        },
      },
      {
        classes: [4003],
        where: [productIs('Route 53 Resolver')],
        sources: [from('aws_route53_resolver.query_logs', 'resolver query')],
        note: 'Route 53 Resolver query logs: the query name without its final dot, in lower case.',
        fields: {
          query: f('query.hostname', 'query_name'),
          record_type: f('query.type', 'query_type'),
          answer: f('answers[*].rdata', 'answers[*].Rdata'),
          src_ip: f('src_endpoint.ip', 'srcaddr'),
          src_port: f('src_endpoint.port', 'srcport'),
        },
      },
      {
        classes: [4003],
        where: [productIs('FortiGate')],
        sources: [from('fortinet_fortigate.syslog', 'utm dns filter')],
        note: 'FortiGate DNS filter logs: `answer` is the resolved address (`ipaddr`).',
        fields: {
          query: f('query.hostname', 'qname'),
          record_type: f('query.type', 'qtype'),
          answer: f('answers[*].rdata', 'ipaddr'),
          ...endpoints('srcip', 'dstip', 'srcport', 'dstport'),
        },
      },
      {
        classes: [4003],
        where: [productIs('Zscaler Internet Access')],
        sources: [from('zscaler_zia.web', 'DNS transactions (NSS DNS feed)')],
        note: 'Zscaler NSS DNS transactions: `answer` is the response, unless it is an error (NXDOMAIN, SERVFAIL...).',
        fields: {
          query: f('query.hostname', 'dns_req'),
          record_type: f('query.type', 'dns_reqtype'),
          answer: f('answers[*].rdata', 'dns_resp'),
          src_ip: f('src_endpoint.ip', 'clt_sip'),
          dst_ip: f('dst_endpoint.ip', 'srv_dip'),
          dst_port: f('dst_endpoint.port', 'srv_dport'),
        },
      },
    ],
  },
  {
    category: 'proxy',
    note: "Web requests through a web gateway or a firewall's URL filter. `c-uri` is the URL as the source logs it; `cs-host` the requested host.",
    variants: [
      {
        classes: [4002],
        where: [productIs('Zscaler Internet Access')],
        sources: [from('zscaler_zia.web', 'web transactions (NSS web feed)')],
        note: 'Zscaler NSS web transactions. The mapping splits the URL (its parse step `zurl`) into host, path and query and does not keep it whole, so `c-uri` is not mapped.',
        fields: {
          'c-uri-stem': f('http_request.url.path', 'zurl.path'),
          'c-uri-query': f('http_request.url.query_string', 'zurl.query'),
          'cs-host': f('http_request.url.hostname', 'host'),
          'r-dns': f('dst_endpoint.hostname', 'host'),
          'cs-method': f('http_request.http_method', 'reqmethod'),
          'c-useragent': f('http_request.user_agent', 'ua'),
          'cs-referrer': f('http_request.referrer', 'referer'),
          'sc-status': f('http_response.code', 'respcode'),
          'c-ip': f('src_endpoint.ip', 'cip'),
          src_ip: f('src_endpoint.ip', 'cip'),
          dst_ip: f('dst_endpoint.ip', 'sip'),
        },
      },
      {
        classes: [4002],
        where: [productIs('PAN-OS')],
        sources: [from('paloalto_ngfw.syslog', 'THREAT url')],
        note: 'PAN-OS URL filtering logs (THREAT, subtype url): `c-uri` is the URL as PAN-OS logs it (host and path, usually without the scheme).',
        fields: {
          'c-uri': f('http_request.url.url_string', 'pan.misc'),
          'c-useragent': f('http_request.user_agent', 'pan.user_agent'),
          'cs-referrer': f('http_request.referrer', 'pan.referer'),
          'c-ip': f('src_endpoint.ip', 'pan.src'),
          ...endpoints('pan.src', 'pan.dst', 'pan.sport', 'pan.dport'),
        },
      },
      {
        classes: [4002],
        where: [productIs('FortiGate')],
        sources: [from('fortinet_fortigate.syslog', 'utm webfilter')],
        note: "FortiGate web filter logs. FortiGate's `url` is a path or a whole URL, which the mapping writes to different attributes, so `c-uri` is not mapped.",
        fields: {
          'cs-host': f('http_request.url.hostname', 'hostname'),
          'r-dns': f('dst_endpoint.hostname', 'hostname'),
          'cs-method': f('http_request.http_method', 'httpmethod'),
          'c-useragent': f('http_request.user_agent', 'agent'),
          'cs-referrer': f('http_request.referrer', 'referralurl'),
          'c-ip': f('src_endpoint.ip', 'srcip'),
          ...endpoints('srcip', 'dstip', 'srcport', 'dstport'),
        },
      },
    ],
  },
];
