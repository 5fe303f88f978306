//! The checks a rule's match must pass besides its pattern (see [`Check`]): not a
//! placeholder, random enough, a GitHub token's checksum, a password that is not a variable.

use crate::rules::Check;
use crate::value;

/// Whether a match passes its rule's check.
pub(crate) fn passes(check: Check, secret: &[u8]) -> bool {
    match check {
        Check::Format => true,
        Check::NotPlaceholder => !value::is_placeholder(secret),
        Check::Random => value::looks_random(secret),
        Check::GithubChecksum => {
            github_checksum_ok(secret)
                || (!value::is_placeholder(secret) && value::looks_random(secret))
        }
        Check::PlainPassword => {
            secret.len() >= 4
                && !value::is_variable_reference(secret)
                && !value::is_placeholder(secret)
                && !secret.starts_with(b"<")
        }
        Check::PasswordLike => value::credential_value(secret, true),
        Check::UserPassword => {
            let Some(colon) = secret.iter().position(|&b| b == b':') else {
                return false;
            };
            let (user, password) = (&secret[..colon], &secret[colon + 1..]);
            if password.is_empty() {
                return value::credential_value(user, true);
            }
            // The user may be empty (`redis://:pw@`, `curl -u :pw`) or a variable (`curl -u
            // "$USER:pw"`): the password alone decides.
            password != user
                && password.len() >= 3
                && !value::is_variable_reference(password)
                && !value::is_placeholder(password)
                && !password.starts_with(b"<")
        }
    }
}

/// GitHub tokens end in six base-62 characters of the CRC32 of the 30 before them.
pub(crate) fn github_checksum_ok(token: &[u8]) -> bool {
    const B62: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    if token.len() != 40 || token.get(3) != Some(&b'_') {
        return false;
    }
    let (body, check) = (&token[4..34], &token[34..40]);
    let mut n = crc32(body);
    let mut digits = [b'0'; 6];
    for d in digits.iter_mut().rev() {
        *d = B62[(n % 62) as usize];
        n /= 62;
    }
    n == 0 && digits == *check
}

fn crc32(data: &[u8]) -> u32 {
    let mut crc = 0xFFFF_FFFFu32;
    for &b in data {
        crc ^= u32::from(b);
        for _ in 0..8 {
            let mask = (crc & 1).wrapping_neg();
            crc = (crc >> 1) ^ (0xEDB8_8320 & mask);
        }
    }
    !crc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn github_checksum_is_verified() {
        assert!(github_checksum_ok(
            b"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"
        ));
        assert!(!github_checksum_ok(
            b"ghp_wWPw5k4aXcaT4fNP0UcnZwJUVFk6LO0pINUy"
        ));
    }
}
