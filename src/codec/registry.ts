// Every named codec type, for the CLI (`cbqs types|decode|encode`), the fuzzer and the
// property tests.
import type { Codec } from "./core.js";
import * as B from "./broker.js";
import * as S from "./schema.js";

export const codecs = {
  CbqsSigningContextV1: S.CbqsSigningContextV1,
  FinalizedViewV1: S.FinalizedViewV1,
  SigningPublicKey: S.SigningPublicKey,
  HpkePublicKey: S.HpkePublicKey,
  DeliveryClass: S.DeliveryClass,
  StreamPurpose: S.StreamPurpose,
  StreamStatus: S.StreamStatus,
  ProviderStatus: S.ProviderStatus,
  ProviderEndpointTransportV1: S.ProviderEndpointTransportV1,
  ProviderEndpointV1: S.ProviderEndpointV1,
  BaseRateAdmissionV1: S.BaseRateAdmissionV1,
  BaseRateReservationTotalsV1: S.BaseRateReservationTotalsV1,
  ProviderRecordV1: S.ProviderRecordV1,
  StreamConfigV1: S.StreamConfigV1,
  PricingBasisV1: S.PricingBasisV1,
  StreamRecordV1: S.StreamRecordV1,
  PriceQuoteV1: S.PriceQuoteV1,
  BaseRateClassV1: S.BaseRateClassV1,
  BaseRateScheduleV1: S.BaseRateScheduleV1,
  BaseRateSchedulesV1: S.BaseRateSchedulesV1,
  KeyEnvelopeV1: S.KeyEnvelopeV1,
  KeyRotationBatchV1: S.KeyRotationBatchV1,
  KeyBatchReceiptV1: S.KeyBatchReceiptV1,
  LaneScopeV1: S.LaneScopeV1,
  GroupScopeV1: S.GroupScopeV1,
  StreamGrantV1: S.StreamGrantV1,
  SessionProofV1: S.SessionProofV1,
  CbqsRequestMethodV1: S.CbqsRequestMethodV1,
  RequestProofV1: S.RequestProofV1,
  RegisterProviderArgsV1: S.RegisterProviderArgsV1,
  UpdateProviderArgsV1: S.UpdateProviderArgsV1,
  SetProviderStatusArgsV1: S.SetProviderStatusArgsV1,
  CreateStreamArgsV1: S.CreateStreamArgsV1,
  RotationKeyUpdateV1: S.RotationKeyUpdateV1,
  UpdateStreamArgsV1: S.UpdateStreamArgsV1,
  TopUpStreamArgsV1: S.TopUpStreamArgsV1,
  SettleStreamRentArgsV1: S.SettleStreamRentArgsV1,
  CloseStreamArgsV1: S.CloseStreamArgsV1,
  ActivateKeyGenerationArgsV1: S.ActivateKeyGenerationArgsV1,
  CbqsInstructionV1: S.CbqsInstructionV1,
  // Broker-side objects (§10–§15)
  RecordOriginV1: B.RecordOriginV1,
  RecordKindV1: B.RecordKindV1,
  StandardRecordIdV1: B.StandardRecordIdV1,
  FastRecordIdV1: B.FastRecordIdV1,
  RecordIdV1: B.RecordIdV1,
  RecordHeaderV1: B.RecordHeaderV1,
  AppendReceiptV1: B.AppendReceiptV1,
  FastLineageV1: B.FastLineageV1,
  BrokerTransitionKindV1: B.BrokerTransitionKindV1,
  BrokerEpochTransitionV1: B.BrokerEpochTransitionV1,
  CheckpointReceiptV1: B.CheckpointReceiptV1,
  DeliveryStateActionV1: B.DeliveryStateActionV1,
  DeliveryStateReceiptV1: B.DeliveryStateReceiptV1,
  StandardRetentionAnchorV1: B.StandardRetentionAnchorV1,
  GroupRetentionAnchorV1: B.GroupRetentionAnchorV1,
  FastRetentionAnchorV1: B.FastRetentionAnchorV1,
} as const;

export type CodecName = keyof typeof codecs;
export const CODEC_NAMES = Object.keys(codecs) as CodecName[];

export function codecByName(name: string): Codec<unknown> | undefined {
  return Object.hasOwn(codecs, name) ? (codecs[name as CodecName] as Codec<unknown>) : undefined;
}
