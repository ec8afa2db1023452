// Every pull connector Weir ships, by platform name. A connector's folder holds its client,
// streams and cursor rules; test/support/vendors/ holds the simulator it is tested against.
import type { Connector } from './sdk.js';
import { crowdstrikeFalconConnector } from './crowdstrike_falcon/index.js';
import { awsCloudtrailConnector } from './aws_cloudtrail/index.js';
import { oktaConnector } from './okta/index.js';
import { githubConnector } from './github/index.js';
import { googleWorkspaceConnector } from './google_workspace/index.js';
import { microsoftGraphConnector } from './microsoft_graph/index.js';
import { awsS3Connector } from './aws_s3/index.js';

export const CONNECTORS: readonly Connector[] = [
  // Each connector adds itself here: import { oktaConnector } from './okta/index.js'; ...
  crowdstrikeFalconConnector,
  awsCloudtrailConnector,
  oktaConnector,
  githubConnector,
  googleWorkspaceConnector,
  microsoftGraphConnector,
  awsS3Connector,
];

const byPlatform = new Map<string, Connector>(CONNECTORS.map((c) => [c.platform, c]));

export function connectorFor(platform: string): Connector | undefined {
  return byPlatform.get(platform);
}

/** The shipped connectors and any registered since (tests). */
export function allConnectors(): Connector[] {
  return [...byPlatform.values()];
}

/**
 * Adds a connector (tests register fakes before creating an app; the container registers
 * the platform of every connector that has no built-in platform definition).
 */
export function registerConnector(connector: Connector): void {
  byPlatform.set(connector.platform, connector);
}
