//! The access rule of the system home on Windows, as data, so that it is
//! tested on every platform: the DACL `install --system` gives
//! `%ProgramData%\cudnnm` ([`SYSTEM_HOME_DACL`], in SDDL by [`sddl`]), and
//! the check that no ACE lets ordinary users write ([`users_may_write`]).
//!
//! Why not inherit `%ProgramData%`'s ACL: its default lets `BUILTIN\Users`
//! create files and folders in every subfolder (`(CI)(WD,AD,WEA,WA)`, with
//! `CREATOR OWNER` then owning what they made), so any user could plant a
//! release that every user sees as the system's; see
//! <https://github.com/chocolatey/choco/issues/398> (Chocolatey's
//! `%ProgramData%` folder locked down the same way: no inheritance,
//! SYSTEM and Administrators full control, Users read and execute) and
//! <https://github.com/aelassas/servy/issues/357>. [`PROGRAMDATA_DEFAULT`]
//! holds that default as `icacls C:\ProgramData` lists it.
//!
//! Access masks: <https://learn.microsoft.com/en-us/windows/win32/fileio/file-access-rights-constants>;
//! SDDL ACE strings: <https://learn.microsoft.com/en-us/windows/win32/secauthz/ace-strings>.

/// Who an ACE is for, by its well-known SDDL alias.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Trustee {
    /// `NT AUTHORITY\SYSTEM` (`SY`).
    System,
    /// `BUILTIN\Administrators` (`BA`).
    Administrators,
    /// `BUILTIN\Users` (`BU`): every ordinary user.
    Users,
    /// `CREATOR OWNER` (`CO`): whoever creates the file or folder.
    CreatorOwner,
}

impl Trustee {
    /// The SDDL alias (`SY`, `BA`, `BU`, `CO`).
    pub fn sddl(self) -> &'static str {
        match self {
            Trustee::System => "SY",
            Trustee::Administrators => "BA",
            Trustee::Users => "BU",
            Trustee::CreatorOwner => "CO",
        }
    }
}

/// `FILE_ALL_ACCESS`: full control (icacls `F`).
pub const FULL_CONTROL: u32 = 0x001F_01FF;
/// `FILE_GENERIC_READ | FILE_GENERIC_EXECUTE`: read and execute (icacls `RX`).
pub const READ_EXECUTE: u32 = 0x0012_00A9;
/// `FILE_WRITE_DATA` (add a file to a folder; icacls `WD`).
pub const WRITE_DATA: u32 = 0x0002;
/// `FILE_APPEND_DATA` (add a subfolder; icacls `AD`).
pub const APPEND_DATA: u32 = 0x0004;
/// `FILE_WRITE_EA` (icacls `WEA`).
pub const WRITE_EA: u32 = 0x0010;
/// `FILE_DELETE_CHILD` (icacls `DC`).
pub const DELETE_CHILD: u32 = 0x0040;
/// `FILE_WRITE_ATTRIBUTES`, which clears the read-only attribute (icacls `WA`).
pub const WRITE_ATTRIBUTES: u32 = 0x0100;
/// `DELETE`, `WRITE_DAC`, `WRITE_OWNER`.
pub const DELETE_DAC_OWNER: u32 = 0x0001_0000 | 0x0004_0000 | 0x0008_0000;

/// Every bit that changes a file or folder, its attributes or its ACL.
pub const ANY_WRITE: u32 =
    WRITE_DATA | APPEND_DATA | WRITE_EA | DELETE_CHILD | WRITE_ATTRIBUTES | DELETE_DAC_OWNER;

/// One access-allowed ACE.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ace {
    /// Who.
    pub trustee: Trustee,
    /// The access mask.
    pub mask: u32,
    /// Inherited by files (`OI`).
    pub files: bool,
    /// Inherited by folders (`CI`).
    pub folders: bool,
    /// For children only, not the folder itself (`IO`).
    pub inherit_only: bool,
}

const fn ace(trustee: Trustee, mask: u32, files: bool, inherit_only: bool) -> Ace {
    Ace {
        trustee,
        mask,
        files,
        folders: true,
        inherit_only,
    }
}

/// The DACL of the system home, set protected (nothing inherited from
/// `%ProgramData%`) and inherited by everything below: SYSTEM and
/// Administrators full control, Users read and execute only.
pub const SYSTEM_HOME_DACL: [Ace; 3] = [
    ace(Trustee::System, FULL_CONTROL, true, false),
    ace(Trustee::Administrators, FULL_CONTROL, true, false),
    ace(Trustee::Users, READ_EXECUTE, true, false),
];

/// The default DACL of `C:\ProgramData` as `icacls` lists it:
/// `SYSTEM:(OI)(CI)(F)`, `Administrators:(OI)(CI)(F)`,
/// `CREATOR OWNER:(OI)(CI)(IO)(F)`, `Users:(OI)(CI)(RX)`,
/// `Users:(CI)(WD,AD,WEA,WA)` (see the module docs).
pub const PROGRAMDATA_DEFAULT: [Ace; 5] = [
    ace(Trustee::System, FULL_CONTROL, true, false),
    ace(Trustee::Administrators, FULL_CONTROL, true, false),
    ace(Trustee::CreatorOwner, FULL_CONTROL, true, true),
    ace(Trustee::Users, READ_EXECUTE, true, false),
    ace(
        Trustee::Users,
        WRITE_DATA | APPEND_DATA | WRITE_EA | WRITE_ATTRIBUTES,
        false,
        false,
    ),
];

/// The DACL `aces` in SDDL, protected from inheritance (`D:PAI(…)`), the
/// form `ConvertStringSecurityDescriptorToSecurityDescriptorW` reads.
pub fn sddl(aces: &[Ace]) -> String {
    let mut out = String::from("D:PAI");
    for a in aces {
        let mut flags = String::new();
        if a.files {
            flags.push_str("OI");
        }
        if a.folders {
            flags.push_str("CI");
        }
        if a.inherit_only {
            flags.push_str("IO");
        }
        out.push_str(&format!(
            "(A;{flags};0x{:x};;;{})",
            a.mask,
            a.trustee.sddl()
        ));
    }
    out
}

/// Whether any ACE of `aces` lets `BUILTIN\Users` (or, as they create
/// files, `CREATOR OWNER`) change anything: write or add files, add
/// folders, change attributes, delete, or change the ACL.
pub fn users_may_write(aces: &[Ace]) -> bool {
    aces.iter().any(|a| {
        matches!(a.trustee, Trustee::Users) && a.mask & ANY_WRITE != 0
        // CREATOR OWNER gives the creator rights only over what a user
        // could create, which needs a Users write ACE first.
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_system_home_gives_users_read_and_execute_only() {
        assert_eq!(
            sddl(&SYSTEM_HOME_DACL),
            "D:PAI(A;OICI;0x1f01ff;;;SY)(A;OICI;0x1f01ff;;;BA)(A;OICI;0x1200a9;;;BU)"
        );
        assert!(!users_may_write(&SYSTEM_HOME_DACL));
        let users: Vec<&Ace> = SYSTEM_HOME_DACL
            .iter()
            .filter(|a| a.trustee == Trustee::Users)
            .collect();
        assert_eq!(users.len(), 1);
        assert_eq!(users[0].mask, READ_EXECUTE);
        assert!(users[0].files && users[0].folders && !users[0].inherit_only);
        // Read and execute holds no write bit at all.
        assert_eq!(READ_EXECUTE & ANY_WRITE, 0);
        // Nobody but SYSTEM and Administrators may change anything.
        assert!(
            SYSTEM_HOME_DACL
                .iter()
                .filter(|a| a.mask & ANY_WRITE != 0)
                .all(|a| matches!(a.trustee, Trustee::System | Trustee::Administrators))
        );
    }

    #[test]
    fn inheriting_programdata_would_let_users_add_releases() {
        // What inheriting would grant: Users may add files and folders
        // below the system home, so the system home sets its own DACL.
        assert!(users_may_write(&PROGRAMDATA_DEFAULT));
        let adds = PROGRAMDATA_DEFAULT
            .iter()
            .find(|a| a.trustee == Trustee::Users && a.mask & WRITE_DATA != 0)
            .unwrap();
        assert!(adds.folders && !adds.files);
        assert!(sddl(&PROGRAMDATA_DEFAULT).contains("(A;CI;0x116;;;BU)"));
    }
}
