//! The attributes whose values are DWARF expressions or location lists, each
//! with its own evaluation context (hetero-2020 "Debugging Information Entry
//! Attributes"; DWARF 5 §2.5, §2.6, §3, §4, §5).

/// An attribute whose expression is evaluated with an attribute-specific
/// context: result kind, initial stack, current object. What each one sets
/// is the evaluators' business (rule IDs `attr.*` in `specs/rules/`); this
/// type only names it, so the caller can ask.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum Attribute {
    /// `DW_AT_location` of a variable, formal parameter or constant.
    Location,
    /// `DW_AT_frame_base` of a subprogram.
    FrameBase,
    /// `DW_AT_data_member_location` (constant or expression form).
    DataMemberLocation,
    /// `DW_AT_use_location` of a pointer-to-member type.
    UseLocation,
    /// `DW_AT_data_location` of a type (descriptor-based objects).
    DataLocation,
    /// `DW_AT_vtable_elem_location` of a virtual function.
    VtableElemLocation,
    /// `DW_AT_static_link` of a nested subprogram.
    StaticLink,
    /// `DW_AT_return_addr` of a subprogram.
    ReturnAddr,
    /// `DW_AT_call_value` of a call site parameter.
    CallValue,
    /// `DW_AT_call_data_location` of a call site parameter.
    CallDataLocation,
    /// `DW_AT_call_data_value` of a call site parameter.
    CallDataValue,
    /// `DW_AT_LLVM_lanes`: the number of lanes of a subprogram.
    LlvmLanes,
    /// `DW_AT_LLVM_lane_pc`: the program location of each lane.
    LlvmLanePc,
    /// `DW_AT_LLVM_active_lane`: the mask of active lanes.
    LlvmActiveLane,
}

impl Attribute {
    /// Every attribute, in declaration order.
    pub const ALL: [Attribute; 14] = [
        Attribute::Location,
        Attribute::FrameBase,
        Attribute::DataMemberLocation,
        Attribute::UseLocation,
        Attribute::DataLocation,
        Attribute::VtableElemLocation,
        Attribute::StaticLink,
        Attribute::ReturnAddr,
        Attribute::CallValue,
        Attribute::CallDataLocation,
        Attribute::CallDataValue,
        Attribute::LlvmLanes,
        Attribute::LlvmLanePc,
        Attribute::LlvmActiveLane,
    ];

    /// The `DW_AT_*` name.
    pub fn dw_name(self) -> &'static str {
        match self {
            Attribute::Location => "DW_AT_location",
            Attribute::FrameBase => "DW_AT_frame_base",
            Attribute::DataMemberLocation => "DW_AT_data_member_location",
            Attribute::UseLocation => "DW_AT_use_location",
            Attribute::DataLocation => "DW_AT_data_location",
            Attribute::VtableElemLocation => "DW_AT_vtable_elem_location",
            Attribute::StaticLink => "DW_AT_static_link",
            Attribute::ReturnAddr => "DW_AT_return_addr",
            Attribute::CallValue => "DW_AT_call_value",
            Attribute::CallDataLocation => "DW_AT_call_data_location",
            Attribute::CallDataValue => "DW_AT_call_data_value",
            Attribute::LlvmLanes => "DW_AT_LLVM_lanes",
            Attribute::LlvmLanePc => "DW_AT_LLVM_lane_pc",
            Attribute::LlvmActiveLane => "DW_AT_LLVM_active_lane",
        }
    }
}
