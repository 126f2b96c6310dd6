//! policy_vault's instructions.
use super::*;

pub(super) fn cases(b: &Builder) -> Vec<Case> {
    let s = key(SIGNER);
    let cosigners = [key(OTHER)];
    let asset = key(ASSET);
    vec![
        case(
            "policy_vault",
            "evaluate_and_commit",
            b.evaluate(&s, evaluate_args(), Attestations::default(), true),
            &[
                // discriminator
                "f3e29aeac4b231c1",
                // payer_asset (0x11 x 32)
                "1111111111111111111111111111111111111111111111111111111111111111",
                // payee_asset (0x22 x 32)
                "2222222222222222222222222222222222222222222222222222222222222222",
                // amount: 72623859790382856 (0x102030405060708)
                "0807060504030201",
                // mint (0x33 x 32)
                "3333333333333333333333333333333333333333333333333333333333333333",
                // policy_id: 168496141 (0xa0b0c0d)
                "0d0c0b0a",
            ],
        ),
        case(
            "policy_vault",
            "evaluate",
            b.evaluate(&s, evaluate_args(), Attestations::default(), false),
            &[
                // discriminator
                "b3d38eb76c6814d6",
                // payer_asset (0x11 x 32)
                "1111111111111111111111111111111111111111111111111111111111111111",
                // payee_asset (0x22 x 32)
                "2222222222222222222222222222222222222222222222222222222222222222",
                // amount: 72623859790382856 (0x102030405060708)
                "0807060504030201",
                // mint (0x33 x 32)
                "3333333333333333333333333333333333333333333333333333333333333333",
                // policy_id: 168496141 (0xa0b0c0d)
                "0d0c0b0a",
            ],
        ),
        case(
            "policy_vault",
            "release_reservation",
            Instruction::new_with_bytes(
                policy_vault::ID,
                &policy_vault::instruction::ReleaseReservation {
                    args: ReleaseArgs {
                        payer_asset: key(PAYER_ASSET),
                        policy_id: POLICY_ID,
                        payee_asset: key(PAYEE_ASSET),
                        amount: AMOUNT,
                        day_index: 0x0000_0000_0000_4D01,
                        week_index: 0x0000_0000_0000_0B02,
                        month_index: 0x0000_0000_0000_0303,
                        reserved_at: -2,
                    },
                }
                .data(),
                vec![],
            ),
            &[
                // discriminator
                "390f65877115a8f7",
                // payer_asset (0x11 x 32)
                "1111111111111111111111111111111111111111111111111111111111111111",
                // policy_id: 168496141 (0xa0b0c0d)
                "0d0c0b0a",
                // payee_asset (0x22 x 32)
                "2222222222222222222222222222222222222222222222222222222222222222",
                // amount: 72623859790382856 (0x102030405060708)
                "0807060504030201",
                // day_index: 19713 (0x4d01)
                "014d000000000000",
                // week_index: 2818 (0xb02)
                "020b000000000000",
                // month_index: 771 (0x303)
                "0303000000000000",
                // reserved_at: -2
                "feffffffffffffff",
            ],
        ),
        case(
            "policy_vault",
            "init_authority",
            b.init_authority(&s, &asset, vec![key(0xD1), key(0xD2)], 2),
            &[
                // discriminator
                "88965eac4ac7ec55",
                // asset (0x55 x 32)
                "5555555555555555555555555555555555555555555555555555555555555555",
                // members: 2 entries
                "02000000",
                // members[0] (0xd1 x 32)
                "d1d1d1d1d1d1d1d1d1d1d1d1d1d1d1d1d1d1d1d1d1d1d1d1d1d1d1d1d1d1d1d1",
                // members[1] (0xd2 x 32)
                "d2d2d2d2d2d2d2d2d2d2d2d2d2d2d2d2d2d2d2d2d2d2d2d2d2d2d2d2d2d2d2d2",
                // threshold: 2
                "02",
            ],
        ),
        case(
            "policy_vault",
            "request_take_over",
            b.request_take_over(&s, &asset, vec![key(0xD3)], 1),
            &[
                // discriminator
                "1e5a71ec94a2cedd",
                // asset (0x55 x 32)
                "5555555555555555555555555555555555555555555555555555555555555555",
                // members: 1 entry
                "01000000",
                // members[0] (0xd3 x 32)
                "d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3",
                // threshold: 1
                "01",
            ],
        ),
        case(
            "policy_vault",
            "complete_take_over",
            b.complete_take_over(&asset, &key(OTHER)),
            &[
                // discriminator
                "60b876fade030e01",
                // asset (0x55 x 32)
                "5555555555555555555555555555555555555555555555555555555555555555",
            ],
        ),
        case(
            "policy_vault",
            "cancel_take_over",
            b.cancel_take_over(&s, &cosigners, &asset, &key(OTHER)),
            &[
                // discriminator
                "ff444614dcc5df61",
                // asset (0x55 x 32)
                "5555555555555555555555555555555555555555555555555555555555555555",
            ],
        ),
        case(
            "policy_vault",
            "accept_take_over",
            b.accept_take_over(&s, &cosigners, &asset, &key(OTHER)),
            &[
                // discriminator
                "1088616796da9d5e",
                // asset (0x55 x 32)
                "5555555555555555555555555555555555555555555555555555555555555555",
            ],
        ),
        case(
            "policy_vault",
            "close_lapsed_take_over",
            b.close_lapsed_take_over(&asset, &key(OTHER)),
            &[
                // discriminator
                "32559370fe4cd0a6",
                // asset (0x55 x 32)
                "5555555555555555555555555555555555555555555555555555555555555555",
            ],
        ),
        case(
            "policy_vault",
            "set_authority_guard",
            b.set_authority_guard(&s, &cosigners, &asset, 0x0001_5180, &key(RECOVERY)),
            &[
                // discriminator
                "0cb6fc49b969cf61",
                // asset (0x55 x 32)
                "5555555555555555555555555555555555555555555555555555555555555555",
                // take_over_delay_secs: 86400 (0x15180)
                "80510100",
                // recovery (0x66 x 32)
                "6666666666666666666666666666666666666666666666666666666666666666",
            ],
        ),
        case(
            "policy_vault",
            "rotate_authority",
            b.rotate_authority(
                &s,
                &cosigners,
                &asset,
                vec![key(0xD4), key(0xD5), key(0xD6)],
                3,
            ),
            &[
                // discriminator
                "f8e197231c0f550c",
                // asset (0x55 x 32)
                "5555555555555555555555555555555555555555555555555555555555555555",
                // members: 3 entries
                "03000000",
                // members[0] (0xd4 x 32)
                "d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4",
                // members[1] (0xd5 x 32)
                "d5d5d5d5d5d5d5d5d5d5d5d5d5d5d5d5d5d5d5d5d5d5d5d5d5d5d5d5d5d5d5d5",
                // members[2] (0xd6 x 32)
                "d6d6d6d6d6d6d6d6d6d6d6d6d6d6d6d6d6d6d6d6d6d6d6d6d6d6d6d6d6d6d6d6",
                // threshold: 3
                "03",
            ],
        ),
        case(
            "policy_vault",
            "init_killswitch",
            b.init_killswitch_direct(&s, &asset),
            &[
                // discriminator
                "cee7fd014f9baf8a",
                // asset (0x55 x 32)
                "5555555555555555555555555555555555555555555555555555555555555555",
            ],
        ),
        case(
            "policy_vault",
            "set_killswitch",
            b.set_killswitch(&s, &cosigners, &asset, true),
            &[
                // discriminator
                "227dea7a9914192f",
                // asset (0x55 x 32)
                "5555555555555555555555555555555555555555555555555555555555555555",
                // paused: true
                "01",
            ],
        ),
        // Without limits: the client sends no rules (one byte).
        case(
            "policy_vault",
            "init_policy",
            b.init_policy(
                &s,
                &cosigners,
                &asset,
                POLICY_ID,
                policy_params(),
                PolicyRules::default(),
                0,
            ),
            &[
                // discriminator
                "2dea6e64d192bf56",
                // asset (0x55 x 32)
                "5555555555555555555555555555555555555555555555555555555555555555",
                // policy_id: 168496141 (0xa0b0c0d)
                "0d0c0b0a",
                // params.kinds: 7
                "07",
                // params.gate_mode: 1
                "01",
                // params.mint (0x33 x 32)
                "3333333333333333333333333333333333333333333333333333333333333333",
                // params.per_tx_cap: 1229782937960972289 (0x1111111100000001)
                "0100000011111111",
                // params.daily_cap: 2459565875921944578 (0x2222222200000002)
                "0200000022222222",
                // params.weekly_cap: 3689348813882916867 (0x3333333300000003)
                "0300000033333333",
                // params.velocity_window_secs: 4919131751843889156 (0x4444444400000004)
                "0400000044444444",
                // params.velocity_max_in_window: 6148914689804861445 (0x5555555500000005)
                "0500000055555555",
                // params.tier0_decay_bps: 1542 (0x606)
                "0606",
                // params.min_counterparty_tier: 7
                "07",
                // params.max_counterparty_risk: 8
                "08",
                // params.min_counterparty_confidence: 2313 (0x909)
                "0909",
                // params.unrated_treatment: 10 (0xa)
                "0a",
                // params.required_capability (0xa3 x 32)
                "a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3",
                // params.accepted_attestors[0] (0xb1 x 32)
                "b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1",
                // params.accepted_attestors[1] (0xb2 x 32)
                "b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2",
                // params.funding: 1
                "01",
                // rules: None
                "00",
                // approval_threshold: 0
                "0000000000000000",
                // holdback: None
                "00",
            ],
        ),
        case(
            "policy_vault",
            "init_policy",
            b.init_policy_with_holdback(
                &s,
                &cosigners,
                &asset,
                POLICY_ID,
                policy_params(),
                policy_rules(),
                0x0F0F_0F0F_0000_0006,
                Some(HoldbackSchedule {
                    terms: [HoldbackTerm {
                        share_bps: 0x0201,
                        hold_secs: 0x0605_0403,
                    }; 6],
                    arbiter: key(OTHER),
                }),
            ),
            &[
                // discriminator
                "2dea6e64d192bf56",
                // asset (0x55 x 32)
                "5555555555555555555555555555555555555555555555555555555555555555",
                // policy_id: 168496141 (0xa0b0c0d)
                "0d0c0b0a",
                // params.kinds: 7
                "07",
                // params.gate_mode: 1
                "01",
                // params.mint (0x33 x 32)
                "3333333333333333333333333333333333333333333333333333333333333333",
                // params.per_tx_cap: 1229782937960972289 (0x1111111100000001)
                "0100000011111111",
                // params.daily_cap: 2459565875921944578 (0x2222222200000002)
                "0200000022222222",
                // params.weekly_cap: 3689348813882916867 (0x3333333300000003)
                "0300000033333333",
                // params.velocity_window_secs: 4919131751843889156 (0x4444444400000004)
                "0400000044444444",
                // params.velocity_max_in_window: 6148914689804861445 (0x5555555500000005)
                "0500000055555555",
                // params.tier0_decay_bps: 1542 (0x606)
                "0606",
                // params.min_counterparty_tier: 7
                "07",
                // params.max_counterparty_risk: 8
                "08",
                // params.min_counterparty_confidence: 2313 (0x909)
                "0909",
                // params.unrated_treatment: 10 (0xa)
                "0a",
                // params.required_capability (0xa3 x 32)
                "a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3",
                // params.accepted_attestors[0] (0xb1 x 32)
                "b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1",
                // params.accepted_attestors[1] (0xb2 x 32)
                "b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2",
                // params.funding: 1
                "01",
                // rules: Some
                "01",
                // rules.payee_list_mode: 2
                "02",
                // rules.payees[0] (0xc1 x 32)
                "c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1",
                // rules.payees[1] (0xc2 x 32)
                "c2c2c2c2c2c2c2c2c2c2c2c2c2c2c2c2c2c2c2c2c2c2c2c2c2c2c2c2c2c2c2c2",
                // rules.payees[2] (0xc3 x 32)
                "c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3",
                // rules.payees[3] (0xc4 x 32)
                "c4c4c4c4c4c4c4c4c4c4c4c4c4c4c4c4c4c4c4c4c4c4c4c4c4c4c4c4c4c4c4c4",
                // rules.payee_list (0xc5 x 32)
                "c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5",
                // rules.not_before: 1610612737 (0x60000001)
                "0100006000000000",
                // rules.not_after: 1879048194 (0x70000002)
                "0200007000000000",
                // rules.monthly_cap: 868082073854803971 (0xc0c0c0c00000003)
                "030000000c0c0c0c",
                // rules.lifetime_cap: 940422246676037636 (0xd0d0d0d00000004)
                "040000000d0d0d0d",
                // rules.payee_daily_cap: 1012762419497271301 (0xe0e0e0e00000005)
                "050000000e0e0e0e",
                // approval_threshold: 1085102592318504966 (0xf0f0f0f00000006)
                "060000000f0f0f0f",
                // holdback: Some
                "01",
                // holdback.terms: 6 x (share_bps 513 (0x201), hold_secs 100992003 (0x6050403))
                "010203040506",
                "010203040506",
                "010203040506",
                "010203040506",
                "010203040506",
                "010203040506",
                // holdback.arbiter (0xf2 x 32)
                "f2f2f2f2f2f2f2f2f2f2f2f2f2f2f2f2f2f2f2f2f2f2f2f2f2f2f2f2f2f2f2f2",
            ],
        ),
        case(
            "policy_vault",
            "approve_payment",
            b.approve_payment(&s, &cosigners, terms(), 0x0000_0000_6500_0007),
            &[
                // discriminator
                "157bc38b6b8d22bb",
                // terms.payer_asset (0x11 x 32)
                "1111111111111111111111111111111111111111111111111111111111111111",
                // terms.payee_asset (0x22 x 32)
                "2222222222222222222222222222222222222222222222222222222222222222",
                // terms.mint (0x33 x 32)
                "3333333333333333333333333333333333333333333333333333333333333333",
                // terms.amount: 72623859790382856 (0x102030405060708)
                "0807060504030201",
                // terms.policy_id: 168496141 (0xa0b0c0d)
                "0d0c0b0a",
                // expires_at: 1694498823 (0x65000007)
                "0700006500000000",
            ],
        ),
        case(
            "policy_vault",
            "close_approval",
            b.close_approval(&s, &key(OTHER), &key(SIGNER)),
            &[
                // discriminator
                "8632e5cf43a194cb",
            ],
        ),
        case(
            "policy_vault",
            "edit_payee_list",
            b.edit_payee_list(
                &s,
                &cosigners,
                &asset,
                POLICY_ID,
                vec![key(0xE1), key(0xE2)],
                vec![key(0xE3)],
            ),
            &[
                // discriminator
                "344fc701d0161e6d",
                // asset (0x55 x 32)
                "5555555555555555555555555555555555555555555555555555555555555555",
                // policy_id: 168496141 (0xa0b0c0d)
                "0d0c0b0a",
                // add: 2 entries
                "02000000",
                // add[0] (0xe1 x 32)
                "e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1",
                // add[1] (0xe2 x 32)
                "e2e2e2e2e2e2e2e2e2e2e2e2e2e2e2e2e2e2e2e2e2e2e2e2e2e2e2e2e2e2e2e2",
                // remove: 1 entry
                "01000000",
                // remove[0] (0xe3 x 32)
                "e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3e3",
            ],
        ),
        case(
            "policy_vault",
            "retire_policy",
            b.retire_policy(&s, &cosigners, &asset, POLICY_ID),
            &[
                // discriminator
                "2b6191480b51ca4c",
                // asset (0x55 x 32)
                "5555555555555555555555555555555555555555555555555555555555555555",
                // policy_id: 168496141 (0xa0b0c0d)
                "0d0c0b0a",
            ],
        ),
        case(
            "policy_vault",
            "set_vault_spender",
            b.set_vault_spender(&s, &cosigners, &asset, POLICY_ID, &key(SPENDER)),
            &[
                // discriminator
                "99f91bedc17b2053",
                // asset (0x55 x 32)
                "5555555555555555555555555555555555555555555555555555555555555555",
                // policy_id: 168496141 (0xa0b0c0d)
                "0d0c0b0a",
                // spender (0x77 x 32)
                "7777777777777777777777777777777777777777777777777777777777777777",
            ],
        ),
        case(
            "policy_vault",
            "set_acceptance_policy",
            b.set_acceptance_policy(
                &s,
                &cosigners,
                &asset,
                AcceptanceParams {
                    min_payer_tier: 0x02,
                    gate_mode: 0x01,
                    max_payer_risk: 0x03,
                    min_payer_confidence: 0x0404,
                    unrated_treatment: 0x05,
                    required_capability: CAPABILITY,
                    accepted_attestors: [key(0xB1), key(0xB2)],
                    holdback: HoldbackAcceptance {
                        max_share_bps: 0x0102,
                        max_hold_secs: 0x0304_0506,
                        arbiters: [key(0xC1), key(0xC2)],
                    },
                },
            ),
            &[
                // discriminator
                "6d2c5bd787d91599",
                // asset (0x55 x 32)
                "5555555555555555555555555555555555555555555555555555555555555555",
                // params.min_payer_tier: 2
                "02",
                // params.gate_mode: 1
                "01",
                // params.max_payer_risk: 3
                "03",
                // params.min_payer_confidence: 1028 (0x404)
                "0404",
                // params.unrated_treatment: 5
                "05",
                // params.required_capability (0xa3 x 32)
                "a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3",
                // params.accepted_attestors[0] (0xb1 x 32)
                "b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1",
                // params.accepted_attestors[1] (0xb2 x 32)
                "b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2",
                // params.holdback.max_share_bps: 258 (0x102)
                "0201",
                // params.holdback.max_hold_secs: 50595078 (0x3040506)
                "06050403",
                // params.holdback.arbiters (0xc1 x 32, 0xc2 x 32)
                "c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1",
                "c2c2c2c2c2c2c2c2c2c2c2c2c2c2c2c2c2c2c2c2c2c2c2c2c2c2c2c2c2c2c2c2",
            ],
        ),
        case(
            "policy_vault",
            "open_vault",
            b.open_vault(&s, &cosigners, &asset, &key(MINT), &key(OTHER)),
            &[
                // discriminator
                "b5f8e44306af25a7",
                // asset (0x55 x 32)
                "5555555555555555555555555555555555555555555555555555555555555555",
                // mint (0x33 x 32)
                "3333333333333333333333333333333333333333333333333333333333333333",
            ],
        ),
        case(
            "policy_vault",
            "withdraw",
            b.withdraw(
                &s,
                &cosigners,
                &asset,
                &key(MINT),
                &key(OTHER),
                &key(OTHER),
                AMOUNT,
            ),
            &[
                // discriminator
                "b712469c946da122",
                // asset (0x55 x 32)
                "5555555555555555555555555555555555555555555555555555555555555555",
                // mint (0x33 x 32)
                "3333333333333333333333333333333333333333333333333333333333333333",
                // amount: 72623859790382856 (0x102030405060708)
                "0807060504030201",
            ],
        ),
    ]
}
