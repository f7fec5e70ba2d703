import type { z } from 'zod';
import type {
  connectionsSchema,
  ExitInfoDto,
  latencySampleSchema,
  ListSourceDto,
  ListStatusDto,
  ListViaDto,
  logEventSchema,
  NodeDto,
  NodeTestDto,
  RuleImportRequest,
  RuleImportResult,
  Status,
} from '../../../core/api/schemas.js';
import type { EventMap, RuleProviderSetting, Settings, SysproxyState } from '../../../core/api/contract.js';
import type { Connection } from '../client/core-client.js';

export type {
  NodeDto,
  Status,
  Settings,
  SysproxyState,
  Connection,
  RuleProviderSetting,
  RuleImportRequest,
  RuleImportResult,
};
export type ListVia = ListViaDto;
export type NodeTest = NodeTestDto;
export type ExitInfo = ExitInfoDto;
export type ListSource = ListSourceDto;
export type ListStatus = ListStatusDto;
export type LatencySample = z.infer<typeof latencySampleSchema>;
export type LogLine = z.infer<typeof logEventSchema>;
export type ConnectionDto = z.infer<typeof connectionsSchema>['connections'][number];
export type RefreshProgress = EventMap['refresh'];
export type View = 'overview' | 'nodes' | 'latency' | 'connections' | 'traffic' | 'logs' | 'settings';
export type Loadable = 'loading' | 'ready' | 'error';
