//! validation_registry's instructions.
use super::*;

pub(super) fn cases(b: &Builder) -> Vec<Case> {
    let s = key(SIGNER);
    vec![
        case(
            "validation_registry",
            "register_namespace",
            b.register_namespace(&s, "pay.v1", "1.0.0", "https://s.x/p"),
            &[
                // discriminator
                "a88f90912d505d7e",
                // name: 'pay.v1'
                "060000007061792e7631",
                // version: '1.0.0'
                "05000000312e302e30",
                // schema_uri: 'https://s.x/p'
                "0d00000068747470733a2f2f732e782f70",
            ],
        ),
        case(
            "validation_registry",
            "register_attestor",
            b.register_attestor(&s, "ipfs://attestor"),
            &[
                // discriminator
                "44c956f433710f5e",
                // display_name_uri: 'ipfs://attestor'
                "0f000000697066733a2f2f6174746573746f72",
            ],
        ),
        case(
            "validation_registry",
            "request_validation",
            b.request_validation(
                &s,
                &key(SUBJECT),
                &CAPABILITY,
                CLAIM_URI,
                0x0000_0000_0BAD_F00D,
            ),
            &[
                // discriminator
                "481a3543e41e9035",
                // subject_asset (0x88 x 32)
                "8888888888888888888888888888888888888888888888888888888888888888",
                // capability_hash (0xa3 x 32)
                "a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3",
                // claim_uri_hash (0xa4 x 32)
                "a4a4a4a4a4a4a4a4a4a4a4a4a4a4a4a4a4a4a4a4a4a4a4a4a4a4a4a4a4a4a4a4",
                // deadline_slot: 195948557 (0xbadf00d)
                "0df0ad0b00000000",
            ],
        ),
        case(
            "validation_registry",
            "respond_to_validation",
            b.respond_to_validation(
                &s,
                &Claim {
                    subject: key(SUBJECT),
                    capability: CAPABILITY,
                    payload_hash: CLAIM_PAYLOAD,
                    uri_hash: CLAIM_URI,
                    expires_at_slot: 0x0000_0000_0DEC_AF00,
                },
            ),
            &[
                // discriminator
                "40d4f4064186d47a",
                // subject_asset (0x88 x 32)
                "8888888888888888888888888888888888888888888888888888888888888888",
                // capability_hash (0xa3 x 32)
                "a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3",
                // claim_payload_hash (0xa5 x 32)
                "a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5",
                // claim_uri_hash (0xa4 x 32)
                "a4a4a4a4a4a4a4a4a4a4a4a4a4a4a4a4a4a4a4a4a4a4a4a4a4a4a4a4a4a4a4a4",
                // expires_at_slot: 233615104 (0xdecaf00)
                "00afec0d00000000",
            ],
        ),
        case(
            "validation_registry",
            "revoke_validation",
            b.revoke_validation(&s, &key(SUBJECT), &CAPABILITY, REASON),
            &[
                // discriminator
                "2194b288de600de3",
                // subject_asset (0x88 x 32)
                "8888888888888888888888888888888888888888888888888888888888888888",
                // capability_hash (0xa3 x 32)
                "a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3",
                // reason_hash (0xa2 x 32)
                "a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2",
            ],
        ),
    ]
}
